import { open, stat } from 'node:fs/promises'
import { UploadTransferError } from './errors'

export interface ListedState {
  sizeBytes: number
  mtimeMs: number
}

function fsCode(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code
  return typeof code === 'string' ? code : undefined
}

export function diskError(path: string, error: unknown): UploadTransferError {
  if (fsCode(error) === 'ENOENT') {
    return new UploadTransferError(
      'FILE_MISSING',
      `${path} is no longer there; it was moved or deleted since it was listed. Scan the folder again.`,
      {},
      { cause: error },
    )
  }
  return new UploadTransferError(
    'FILE_UNREADABLE',
    `${path} could not be read (${fsCode(error) ?? 'unknown error'}). Check that Atelier may read it, then try again.`,
    {},
    { cause: error },
  )
}

export function changedError(path: string, what: string): UploadTransferError {
  return new UploadTransferError(
    'FILE_CHANGED',
    `${path} changed while it was being uploaded (${what}). Its upload starts over: scan and hash it again.`,
  )
}

/** Fails with FILE_CHANGED unless the file still has the size and mtime it was hashed with. */
export async function checkUnchanged(path: string, listed: ListedState): Promise<void> {
  let now: { size: number; mtimeMs: number }
  try {
    now = await stat(path)
  } catch (error) {
    throw diskError(path, error)
  }
  if (now.size !== listed.sizeBytes) {
    throw changedError(path, `${listed.sizeBytes} bytes when hashed, ${now.size} now`)
  }
  // The ledger may hold the mtime rounded or truncated to whole milliseconds.
  if (Math.abs(now.mtimeMs - listed.mtimeMs) >= 1) {
    throw changedError(path, 'it was modified after it was hashed')
  }
}

/** Thrown from inside a part's body when the file holds fewer bytes than the part needs. */
export class ShortReadError extends Error {
  override readonly name = 'ShortReadError'
}

/**
 * Chunks of 512 KiB: an 8 MiB part goes out in 16 reads and socket writes instead of 128 (64 KiB
 * chunks cost more in reads and hand-offs than in bytes), while memory stays at two chunks per
 * part in flight, the one being written and the one being read.
 */
const CHUNK_BYTES = 512 * 1024

/**
 * The bytes of one part, streamed from disk chunk by chunk, so memory stays at a couple of
 * chunks whatever the part size; the next chunk is read while the request writes the one before.
 * `onChunk` is told each chunk as it is handed to the request.
 */
export async function* partBytes(
  path: string,
  offset: number,
  size: number,
  onChunk: (bytes: number) => void,
): AsyncGenerator<Uint8Array> {
  if (size === 0) return
  const handle = await open(path, 'r')
  // A fresh buffer each time: fetch takes over what it is given (its stream detaches it), and
  // may still be writing the chunk before.
  const readAt = (done: number) => {
    const length = Math.min(CHUNK_BYTES, size - done)
    return handle.read(Buffer.allocUnsafeSlow(length), 0, length, offset + done)
  }
  let read = 0
  let pending: ReturnType<typeof readAt> | null = readAt(0)
  try {
    while (pending) {
      const { bytesRead, buffer } = await pending
      pending = null
      if (bytesRead === 0) break
      read += bytesRead
      if (read < size) pending = readAt(read)
      onChunk(bytesRead)
      yield buffer.subarray(0, bytesRead)
    }
  } finally {
    await pending?.catch(() => undefined)
    await handle.close()
  }
  if (read < size) throw new ShortReadError(`read ${read} of ${size} bytes`)
}
