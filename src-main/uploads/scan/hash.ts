import { createHash } from 'node:crypto'
import type { Stats } from 'node:fs'
import { stat, type FileHandle } from 'node:fs/promises'
import { abortedError, fileError, UploadScanError } from './errors'
import { openRegularFile } from './files'

export interface HashOptions {
  signal?: AbortSignal
  /** Told the size of each chunk as it is hashed (deltas, not a running total). */
  onBytes?: (bytes: number) => void
  /**
   * A file of at most this many bytes comes back with its bytes (`FileHash.bytes`), read once
   * for both hashing and sending; larger files are streamed as usual. 0 (the default) keeps none.
   */
  keepBytesUpTo?: number
}

export interface FileHash {
  sha256: string
  sizeBytes: number
  /** Whole milliseconds (floored): the ledger keeps integers. */
  mtimeMs: number
  /** The bytes hashed, when the file was no larger than `keepBytesUpTo`. */
  bytes?: Buffer
}

/** Chunks of 1 MiB: few enough reads for a fast disk, little enough memory per file hashed. */
const CHUNK_BYTES = 1024 * 1024

function changedError(path: string, what: string): UploadScanError {
  return new UploadScanError(
    'FILE_CHANGED',
    `${path} changed while it was being hashed (${what}). Wait until nothing writes to it, then hash it again.`,
    path,
  )
}

/** What tells that the hashed bytes are not the file's bytes any more. */
function difference(before: Stats, after: Stats, bytesRead: number): string | null {
  if (after.ino !== before.ino || after.dev !== before.dev) return 'it was replaced by another file'
  if (after.size !== before.size) return `${before.size} bytes before, ${after.size} after`
  if (bytesRead !== before.size) return `${before.size} bytes listed, ${bytesRead} read`
  if (after.mtimeMs !== before.mtimeMs) return 'it was modified'
  return null
}

/**
 * Reads the `size` bytes the file had when opened, chunk by chunk, into `target` (the whole file)
 * or into two chunk buffers used in turn. The next read is asked for before the chunk in hand is
 * handed on, so the disk (libuv's threads) and the hashing (this thread) work at the same time.
 * Answers the bytes read: fewer than `size` when the file was cut short meanwhile.
 */
async function readChunks(
  handle: FileHandle,
  size: number,
  target: Buffer | null,
  signal: AbortSignal | undefined,
  onChunk: (chunk: Buffer) => void,
): Promise<number> {
  const chunkSize = Math.min(CHUNK_BYTES, size)
  const buffers: Buffer[] = []
  const readAt = (position: number, turn: number) => {
    const length = Math.min(CHUNK_BYTES, size - position)
    if (target) return handle.read(target, position, length, position)
    // The second buffer only once a second chunk is needed: most files fit in one.
    const buffer = (buffers[turn % 2] ??= Buffer.allocUnsafe(chunkSize))
    return handle.read(buffer, 0, length, position)
  }
  let position = 0
  let pending = size > 0 ? readAt(0, 0) : null
  try {
    for (let turn = 1; pending; turn++) {
      const { bytesRead, buffer } = await pending
      pending = null
      if (bytesRead === 0) break
      const offset = target ? position : 0
      position += bytesRead
      if (position < size) pending = readAt(position, turn)
      onChunk(buffer.subarray(offset, offset + bytesRead))
      if (signal?.aborted) throw abortedError(signal, 'hash')
    }
  } finally {
    // A read still under way must end before the descriptor is closed, and must not reject
    // unheard.
    await pending?.catch(() => undefined)
  }
  return position
}

/**
 * The sha256 of a file, streamed in 1 MiB chunks (never the whole file in memory, unless asked
 * to keep a small file's bytes), with the size and mtime it had. Fails with FILE_CHANGED when
 * the file was written, truncated or replaced meanwhile (same-size rewrites within the file
 * system's mtime resolution cannot be seen), ABORTED when the signal fires, and FILE_MISSING,
 * NOT_A_FILE or FILE_UNREADABLE.
 */
export async function hashFile(path: string, options: HashOptions = {}): Promise<FileHash> {
  const { signal, onBytes } = options
  if (signal?.aborted) throw abortedError(signal, 'hash')
  let opened: Awaited<ReturnType<typeof openRegularFile>>
  try {
    opened = await openRegularFile(path)
  } catch (error) {
    throw fileError(path, error)
  }
  const { handle, stats: before } = opened
  try {
    const hash = createHash('sha256')
    const keepUpTo = options.keepBytesUpTo ?? 0
    const keep = keepUpTo > 0 && before.size <= keepUpTo
    const bytes = keep ? Buffer.allocUnsafe(before.size) : null
    const bytesRead = await readChunks(handle, before.size, bytes, signal, (chunk) => {
      hash.update(chunk)
      onBytes?.(chunk.length)
    })
    // By path, not by descriptor: a file renamed over this one is a change too. Growth shows
    // here as well, since only the size it had when opened is read.
    const after = await stat(path)
    const changed = difference(before, after, bytesRead)
    if (changed) throw changedError(path, changed)
    return {
      sha256: hash.digest('hex'),
      sizeBytes: before.size,
      mtimeMs: Math.floor(before.mtimeMs),
      ...(bytes ? { bytes } : {}),
    }
  } catch (error) {
    if (signal?.aborted) throw abortedError(signal, 'hash')
    throw fileError(path, error)
  } finally {
    await handle.close()
  }
}
