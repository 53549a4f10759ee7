import { createReadStream } from 'node:fs'
import { stat } from 'node:fs/promises'
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
 * The bytes of one part, streamed from disk in small chunks, so memory stays at the stream's
 * buffer whatever the part size; `onChunk` is told each chunk as it is handed to the request.
 */
export async function* partBytes(
  path: string,
  offset: number,
  size: number,
  onChunk: (bytes: number) => void,
): AsyncGenerator<Uint8Array> {
  if (size === 0) return
  const stream = createReadStream(path, { start: offset, end: offset + size - 1 })
  let read = 0
  try {
    for await (const chunk of stream as AsyncIterable<Buffer>) {
      read += chunk.length
      onChunk(chunk.length)
      yield chunk
    }
  } finally {
    stream.destroy()
  }
  if (read < size) throw new ShortReadError(`read ${read} of ${size} bytes`)
}
