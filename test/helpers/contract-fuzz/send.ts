import type { FuzzCase } from './fuzz-case'

export interface Answer {
  status: number
  headers: Headers
  text: string
  /** The body parsed as JSON, or undefined when it is not JSON. */
  json: unknown
}

/** A case that has no answer after this long is a failure of its own (a hung request). */
const ANSWER_WITHIN_MS = 30_000

function bodyInit(fuzzCase: FuzzCase): { body?: RequestInit['body']; duplex?: 'half' } {
  const body = fuzzCase.body
  if (!body) return {}
  if (body.type === 'form') return { body: new URLSearchParams(body.entries) }
  if (body.type === 'multipart') {
    const form = new FormData()
    for (const [name, value] of body.entries) form.append(name, value)
    return { body: form }
  }
  const bytes = body.build()
  const buffer = typeof bytes === 'string' ? Buffer.from(bytes) : bytes
  if (!body.chunked) return { body: buffer }
  // No Content-Length: the server only learns the size by reading.
  const chunk = 1024 * 1024
  let offset = 0
  const stream = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (offset >= buffer.length) {
        controller.close()
        return
      }
      controller.enqueue(buffer.subarray(offset, offset + chunk))
      offset += chunk
    },
  })
  return { body: stream, duplex: 'half' }
}

/** Sends a case over HTTP as it is, byte for byte, and reads the whole answer. */
export async function sendCase(baseUrl: string, fuzzCase: FuzzCase): Promise<Answer> {
  const response = await fetch(`${baseUrl}${fuzzCase.target}`, {
    method: fuzzCase.method,
    headers: fuzzCase.headers,
    ...bodyInit(fuzzCase),
    signal: AbortSignal.timeout(ANSWER_WITHIN_MS),
  })
  const text = await response.text()
  let json: unknown
  try {
    json = text ? JSON.parse(text) : undefined
  } catch {
    // Not JSON: the checks say so.
  }
  return { status: response.status, headers: response.headers, text, json }
}
