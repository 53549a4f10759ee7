import { describe, expect, it } from 'vitest'
import { readPrefix } from '../../src-main/service/body'

function streamOf(chunks: Uint8Array[], onCancel?: () => void, failAfter?: number) {
  let index = 0
  let pulled = 0
  const stream = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (failAfter !== undefined && index >= failAfter) {
        controller.error(new TypeError('terminated'))
        return
      }
      const chunk = chunks[index++]
      if (chunk === undefined) controller.close()
      else {
        pulled += chunk.byteLength
        controller.enqueue(chunk)
      }
    },
    cancel() {
      onCancel?.()
    },
  })
  return { stream, pulled: () => pulled }
}

const text = (value: string) => new TextEncoder().encode(value)

describe('readPrefix', () => {
  it('reads a small body whole', async () => {
    const { stream } = streamOf([text('{"code":'), text('"X"}')])
    await expect(readPrefix(stream)).resolves.toBe('{"code":"X"}')
  })

  it('stops at the limit and cancels the rest', async () => {
    let cancelled = false
    const chunk = new Uint8Array(1000).fill(0x61)
    const { stream, pulled } = streamOf(
      Array.from({ length: 10_000 }, () => chunk),
      () => (cancelled = true),
    )
    const prefix = await readPrefix(stream, 2500)
    expect(prefix).toBe('a'.repeat(2500))
    expect(cancelled).toBe(true)
    expect(pulled()).toBeLessThan(5000)
  })

  it('gives what arrived when the body breaks off', async () => {
    const { stream } = streamOf([text('<html>'), text('<body>')], undefined, 1)
    await expect(readPrefix(stream)).resolves.toBe('<html>')
  })

  it('gives an empty string for no body', async () => {
    await expect(readPrefix(null)).resolves.toBe('')
  })
})
