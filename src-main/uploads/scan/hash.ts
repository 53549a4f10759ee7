import { createHash } from 'node:crypto'
import type { Stats } from 'node:fs'
import { stat } from 'node:fs/promises'
import { abortedError, fileError, UploadScanError } from './errors'
import { openRegularFile } from './files'

export interface HashOptions {
  signal?: AbortSignal
  /** Told the size of each chunk as it is hashed (deltas, not a running total). */
  onBytes?: (bytes: number) => void
}

export interface FileHash {
  sha256: string
  sizeBytes: number
  /** Whole milliseconds (floored): the ledger keeps integers. */
  mtimeMs: number
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
 * The sha256 of a file, streamed in 1 MiB chunks (never the whole file in memory), with the
 * size and mtime it had. Fails with FILE_CHANGED when the file was written, truncated or
 * replaced meanwhile (same-size rewrites within the file system's mtime resolution cannot be
 * seen), ABORTED when the signal fires, and FILE_MISSING, NOT_A_FILE or FILE_UNREADABLE.
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
    let bytesRead = 0
    const stream = handle.createReadStream({ highWaterMark: CHUNK_BYTES, autoClose: false, signal })
    for await (const chunk of stream as AsyncIterable<Buffer>) {
      hash.update(chunk)
      bytesRead += chunk.length
      onBytes?.(chunk.length)
    }
    // By path, not by descriptor: a file renamed over this one is a change too.
    const after = await stat(path)
    const changed = difference(before, after, bytesRead)
    if (changed) throw changedError(path, changed)
    return {
      sha256: hash.digest('hex'),
      sizeBytes: before.size,
      mtimeMs: Math.floor(before.mtimeMs),
    }
  } catch (error) {
    if (signal?.aborted) throw abortedError(signal, 'hash')
    throw fileError(path, error)
  } finally {
    await handle.close()
  }
}
