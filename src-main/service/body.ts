/** How much of an error body is read: an envelope is tiny, a proxy's page is not. */
export const ERROR_BODY_LIMIT = 64 * 1024

/**
 * Reads at most `limit` bytes of a body and cancels the rest, so a 10 MB
 * error page costs one small read instead of the whole transfer. A body that
 * breaks off part-way gives what arrived: an error's status is already the
 * answer, the body only adds detail.
 */
export async function readPrefix(
  body: ReadableStream<Uint8Array> | null,
  limit: number = ERROR_BODY_LIMIT,
): Promise<string> {
  if (body === null) return ''
  const reader = body.getReader()
  const chunks: Uint8Array[] = []
  let size = 0
  let done = false
  try {
    while (size < limit) {
      const next = await reader.read()
      if (next.done) {
        done = true
        break
      }
      const room = limit - size
      const chunk = next.value.byteLength > room ? next.value.subarray(0, room) : next.value
      chunks.push(chunk)
      size += chunk.byteLength
    }
  } catch {
    done = true
  } finally {
    // Cancelling tells undici to drop the connection instead of draining it.
    if (!done) await reader.cancel().catch(() => undefined)
    reader.releaseLock()
  }
  return new TextDecoder().decode(Buffer.concat(chunks))
}
