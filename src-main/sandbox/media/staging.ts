import { createHash, randomBytes } from 'node:crypto'
import { createReadStream, createWriteStream, readdirSync, readFileSync, rmSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { pipeline } from 'node:stream/promises'
import type { BlobStore } from '../blobs'

/**
 * Files of uploads in progress, in the blob store's staging folder. Every name starts with
 * `upload-<upload id>-`, so that one upload's files (parts, half-written parts, the assembled
 * file) are found and removed together, and other areas' staging files are never touched.
 */

const PREFIX = 'upload-'

export function partPath(blobs: BlobStore, uploadId: string, partNumber: number): string {
  return blobs.stagingPath(`${PREFIX}${uploadId}-part-${partNumber}`)
}

/** A fresh file name for bytes still being written; renamed into place once complete. */
export function temporaryPath(blobs: BlobStore, uploadId: string, what: string): string {
  return blobs.stagingPath(`${PREFIX}${uploadId}-${what}.${randomBytes(6).toString('hex')}.tmp`)
}

function stagingFolder(blobs: BlobStore): string {
  return dirname(blobs.stagingPath('probe'))
}

export function removeUploadFiles(blobs: BlobStore, uploadId: string): void {
  const folder = stagingFolder(blobs)
  for (const name of readdirSync(folder)) {
    if (name.startsWith(`${PREFIX}${uploadId}-`)) rmSync(join(folder, name), { force: true })
  }
}

/** The ids of the uploads that have files in staging, for the expiry sweep. */
export function stagedUploadIds(blobs: BlobStore): Set<string> {
  const ids = new Set<string>()
  for (const name of readdirSync(stagingFolder(blobs))) {
    const match = /^upload-([0-9a-f-]{36})-/.exec(name)
    if (match?.[1]) ids.add(match[1])
  }
  return ids
}

/** Files up to this size are read whole by `hashOf`, and their bytes handed back. */
const READ_WHOLE_UP_TO = 64 * 1024

/**
 * The sha256 and size of a file of about `expectedSize` bytes, read in one pass: a small one in
 * one call (a trip through the thread pool for each of open, stat, read and close costs more
 * than reading it), its bytes returned for the caller to look at without reading the file again;
 * a larger one streamed through a bounded buffer.
 */
export async function hashOf(
  path: string,
  expectedSize: number,
): Promise<{ sha256: string; size: number; bytes?: Buffer }> {
  if (expectedSize <= READ_WHOLE_UP_TO) {
    const bytes = readFileSync(path)
    return { sha256: createHash('sha256').update(bytes).digest('hex'), size: bytes.length, bytes }
  }
  const hash = createHash('sha256')
  let size = 0
  for await (const chunk of createReadStream(path, { highWaterMark: 1024 * 1024 })) {
    const bytes = chunk as Buffer
    hash.update(bytes)
    size += bytes.length
  }
  return { sha256: hash.digest('hex'), size }
}

/**
 * Concatenates the parts into `target`, hashing on the way: one pass over the bytes, a bounded
 * buffer whatever the file's size.
 */
export async function assemble(
  parts: readonly string[],
  target: string,
): Promise<{ sha256: string; size: number }> {
  const hash = createHash('sha256')
  let size = 0
  try {
    await pipeline(
      async function* () {
        for (const part of parts) {
          for await (const chunk of createReadStream(part, { highWaterMark: 1024 * 1024 })) {
            const bytes = chunk as Buffer
            hash.update(bytes)
            size += bytes.length
            yield bytes
          }
        }
      },
      createWriteStream(target, { flags: 'wx' }),
    )
  } catch (error) {
    rmSync(target, { force: true })
    throw error
  }
  return { sha256: hash.digest('hex'), size }
}
