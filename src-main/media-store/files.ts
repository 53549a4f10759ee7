import { createHash, randomBytes } from 'node:crypto'
import {
  closeSync,
  createWriteStream,
  mkdirSync,
  openSync,
  readdirSync,
  readSync,
  rmSync,
} from 'node:fs'
import { open } from 'node:fs/promises'
import { join } from 'node:path'
import { pipeline } from 'node:stream/promises'

export const SHA256_HEX = /^[0-9a-f]{64}$/

/** `<dir>/ab/abcdef…`: 256 shards keep every folder small enough to list quickly. */
export function entryPath(dir: string, sha256: string): string {
  return join(dir, sha256.slice(0, 2), sha256)
}

export function shardDir(dir: string, sha256: string): string {
  return join(dir, sha256.slice(0, 2))
}

/**
 * Temp files of live writers in this process. Names carry the writer's pid, so that a store
 * opening the same folder (the app and the `atelier` command share `--home`) cleans only what a
 * dead process left behind, never a sibling's half-written download.
 */
const liveTemps = new Set<string>()

export class TempFiles {
  readonly dir: string

  constructor(root: string) {
    this.dir = join(root, 'tmp')
    mkdirSync(this.dir, { recursive: true })
  }

  create(label: string): string {
    const file = join(this.dir, `${process.pid}-${label}-${randomBytes(8).toString('hex')}.part`)
    liveTemps.add(file)
    return file
  }

  /** Forgets a temp file; it is removed unless it was renamed into place. */
  release(file: string, remove = true): void {
    if (remove) {
      try {
        rmSync(file, { force: true })
      } catch {
        // Left for the next open's cleanup; the caller's own error matters more.
      }
    }
    liveTemps.delete(file)
  }

  /** Removes what crashed writers left; answers how many. */
  cleanStale(): number {
    let removed = 0
    for (const name of readdirSync(this.dir)) {
      const file = join(this.dir, name)
      if (liveTemps.has(file)) continue
      const pid = Number(/^(\d+)-/.exec(name)?.[1])
      if (Number.isInteger(pid) && pid !== process.pid && processAlive(pid)) continue
      rmSync(file, { recursive: true, force: true })
      removed += 1
    }
    return removed
  }
}

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    // EPERM: it exists but belongs to someone else.
    return (error as NodeJS.ErrnoException).code === 'EPERM'
  }
}

/**
 * Streams chunks into a new file while hashing them, never holding more than one chunk, and makes
 * the bytes durable before answering: the caller renames the file into place next, and a rename
 * must never publish a file whose data a power loss could still take away.
 */
export async function writeHashed(
  chunks: AsyncIterable<Uint8Array | string>,
  file: string,
  limit: number,
  onTooLarge: (size: number) => Error,
  signal?: AbortSignal,
): Promise<{ sha256: string; size: number }> {
  const hash = createHash('sha256')
  let size = 0
  // `flush` fsyncs before the close that the pipeline waits for.
  const out = createWriteStream(file, { flags: 'wx', flush: true })
  try {
    await pipeline(
      chunks,
      async function* meter(source: AsyncIterable<Uint8Array | string>) {
        for await (const chunk of source) {
          const bytes = typeof chunk === 'string' ? Buffer.from(chunk) : chunk
          size += bytes.byteLength
          if (size > limit) throw onTooLarge(size)
          hash.update(bytes)
          yield bytes
        }
      },
      out,
      signal ? { signal } : {},
    )
  } catch (error) {
    // The file is opened lazily: a failure can beat the open, which would then create the file
    // after the caller removed it. Only once the stream is closed is the file settled.
    if (!out.closed) await new Promise<void>((resolve) => out.once('close', resolve))
    throw error
  }
  return { sha256: hash.digest('hex'), size }
}

export async function writeBytes(file: string, bytes: Uint8Array): Promise<void> {
  const handle = await open(file, 'wx')
  try {
    await handle.writeFile(bytes)
    await handle.sync()
  } finally {
    await handle.close()
  }
}

/**
 * The media type of a file by its first bytes, for files found without an index row (a crash
 * between the rename and the insert, or a damaged index set aside).
 */
export function sniffContentType(file: string): string {
  const head = Buffer.alloc(16)
  let bytes: Buffer
  try {
    const fd = openSync(file, 'r')
    try {
      bytes = head.subarray(0, readSync(fd, head, 0, head.length, 0))
    } finally {
      closeSync(fd)
    }
  } catch {
    return 'application/octet-stream'
  }
  const ascii = (start: number, end: number) => bytes.subarray(start, end).toString('latin1')
  if (bytes[0] === 0x89 && ascii(1, 4) === 'PNG') return 'image/png'
  if (bytes[0] === 0xff && bytes[1] === 0xd8 && bytes[2] === 0xff) return 'image/jpeg'
  if (ascii(0, 4) === 'GIF8') return 'image/gif'
  if (ascii(0, 4) === 'RIFF' && ascii(8, 12) === 'WEBP') return 'image/webp'
  if (ascii(4, 8) === 'ftyp') {
    const brand = ascii(8, 12)
    if (brand === 'avif' || brand === 'avis') return 'image/avif'
    if (brand === 'heic' || brand === 'heix' || brand === 'mif1') return 'image/heic'
    return 'video/mp4'
  }
  if (bytes[0] === 0x1a && bytes[1] === 0x45 && bytes[2] === 0xdf && bytes[3] === 0xa3) {
    return 'video/webm'
  }
  return 'application/octet-stream'
}
