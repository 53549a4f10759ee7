import { createHash, createHmac, timingSafeEqual } from 'node:crypto'
import {
  copyFileSync,
  createReadStream,
  existsSync,
  linkSync,
  mkdirSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs'
import type { ReadStream } from 'node:fs'
import { join } from 'node:path'

/**
 * Content-addressed bytes on disk (`blobs/ab/abcdef…`), and the presigned, expiring URLs through
 * which clients read and write them without an API key, as real object storage would.
 */
export class BlobStore {
  private staging = false

  constructor(
    private readonly dir: string,
    private readonly signingKey: Buffer,
  ) {}

  /** The file of a stored blob, for readers that take a path (libvips). */
  pathOf(sha256: string): string {
    return join(this.dir, sha256.slice(0, 2), sha256)
  }

  put(bytes: Buffer): { sha256: string; size: number } {
    const sha256 = createHash('sha256').update(bytes).digest('hex')
    const path = this.pathOf(sha256)
    if (!existsSync(path)) {
      mkdirSync(join(this.dir, sha256.slice(0, 2)), { recursive: true })
      const partial = `${path}.${process.pid}.tmp`
      writeFileSync(partial, bytes)
      renameSync(partial, path)
    }
    return { sha256, size: bytes.length }
  }

  /**
   * Takes in a file whose sha256 the caller computed while writing it (large uploads are hashed
   * as they stream, never held in memory): it is moved into place, or dropped if already stored.
   */
  adopt(file: string, sha256: string): string {
    const path = this.pathOf(sha256)
    if (existsSync(path)) {
      rmSync(file, { force: true })
    } else {
      mkdirSync(join(this.dir, sha256.slice(0, 2)), { recursive: true })
      renameSync(file, path)
    }
    return path
  }

  /**
   * Takes in a copy of a file that stays where it is, whose sha256 the caller computed: linked
   * into place (no bytes copied; the store's name keeps them once the file is removed), or copied
   * where the file system refuses links. Nothing happens when the bytes are already stored.
   */
  adoptLinked(file: string, sha256: string): string {
    const path = this.pathOf(sha256)
    const link = (): NodeJS.ErrnoException | null => {
      try {
        linkSync(file, path)
        return null
      } catch (error) {
        return error as NodeJS.ErrnoException
      }
    }
    let failure = link()
    if (failure?.code === 'ENOENT' && existsSync(file)) {
      // The first blob of its folder.
      mkdirSync(join(this.dir, sha256.slice(0, 2)), { recursive: true })
      failure = link()
    }
    // EEXIST: these bytes are stored already.
    if (failure && failure.code !== 'EEXIST') {
      const partial = `${path}.${process.pid}.tmp`
      copyFileSync(file, partial)
      renameSync(partial, path)
    }
    return path
  }

  has(sha256: string): boolean {
    return /^[0-9a-f]{64}$/.test(sha256) && existsSync(this.pathOf(sha256))
  }

  size(sha256: string): number {
    return statSync(this.pathOf(sha256)).size
  }

  open(sha256: string): ReadStream {
    return createReadStream(this.pathOf(sha256))
  }

  /**
   * Where a file made from the stored blob `sha256` is kept (`derived/<kind>/ab/abcdef…`), such
   * as the thumbnail of an asset, made on its first request: found again by the blob's hash.
   */
  derivedPath(kind: string, sha256: string): string {
    return join(this.dir, 'derived', kind, sha256.slice(0, 2), sha256)
  }

  /** Where a part or a blob is written before it is known by its hash. */
  stagingPath(name: string): string {
    const folder = join(this.dir, 'staging')
    // Made once: this is asked several times for each part an upload receives.
    if (!this.staging) {
      mkdirSync(folder, { recursive: true })
      this.staging = true
    }
    return join(folder, name)
  }

  private signature(resource: string, expires: number): string {
    return createHmac('sha256', this.signingKey).update(`${resource}\n${expires}`).digest('hex')
  }

  /** `resource` is the path the URL serves, e.g. `/_storage/blobs/<sha>`, with any fixed query. */
  presign(baseUrl: string, resource: string, expiresAtMs: number): string {
    const expires = Math.floor(expiresAtMs / 1000)
    const separator = resource.includes('?') ? '&' : '?'
    return `${baseUrl}${resource}${separator}expires=${expires}&signature=${this.signature(resource, expires)}`
  }

  /**
   * Checks a presigned URL: answers 'ok', 'expired' or 'invalid'. The resource is the URL's path
   * and query without `expires` and `signature`, exactly as `presign` signed it.
   */
  verify(url: URL, nowMs: number): 'ok' | 'expired' | 'invalid' {
    const expires = Number(url.searchParams.get('expires'))
    const signature = url.searchParams.get('signature') ?? ''
    const query = new URLSearchParams(url.searchParams)
    query.delete('expires')
    query.delete('signature')
    const rest = query.toString()
    const resource = rest ? `${url.pathname}?${rest}` : url.pathname
    const expected = Buffer.from(this.signature(resource, expires), 'hex')
    const given = Buffer.from(signature, 'hex')
    if (!Number.isFinite(expires) || given.length !== expected.length) return 'invalid'
    if (!timingSafeEqual(given, expected)) return 'invalid'
    return expires * 1000 < nowMs ? 'expired' : 'ok'
  }
}
