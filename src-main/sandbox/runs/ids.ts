import { randomBytes } from 'node:crypto'

function format(bytes: Buffer): string {
  const hex = bytes.toString('hex')
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20, 32)}`
}

function stamp(bytes: Buffer, ms: number): void {
  let time = ms
  for (let i = 5; i >= 0; i--) {
    bytes[i] = time % 256
    time = Math.floor(time / 256)
  }
}

/** Random bytes drawn in bulk: one `randomBytes` call per id is a measurable cost at load. */
class RandomPool {
  private pool = Buffer.alloc(0)
  private offset = 0

  take16(): Buffer {
    if (this.offset + 16 > this.pool.length) {
      this.pool = randomBytes(16 * 4096)
      this.offset = 0
    }
    const bytes = Buffer.from(this.pool.subarray(this.offset, this.offset + 16))
    this.offset += 16
    return bytes
  }
}

/**
 * UUIDv7 ids that strictly increase within this process (RFC 9562, method 1: a 12-bit counter in
 * `rand_a`). Runs, logs and node runs made in the same millisecond must still list in the order
 * they were made, because lists break `created_at` ties by id.
 */
export class MonotonicIds {
  private readonly random = new RandomPool()
  private lastMs = -1
  private counter = 0

  next(nowMs: number): string {
    let ms = Math.max(0, Math.floor(nowMs))
    if (ms <= this.lastMs) {
      ms = this.lastMs
      this.counter++
      if (this.counter > 0xfff) {
        ms = this.lastMs + 1
        this.counter = 0
      }
    } else {
      this.counter = 0
    }
    this.lastMs = ms
    const bytes = this.random.take16()
    stamp(bytes, ms)
    bytes[6] = 0x70 | (this.counter >> 8)
    bytes[7] = this.counter & 0xff
    bytes[8] = ((bytes[8] ?? 0) & 0x3f) | 0x80
    return format(bytes)
  }
}

/** UUIDv7 for bulk work (history seeding), at any time, past ones included. */
export class BulkIds {
  private readonly random = new RandomPool()

  at(ms: number): string {
    const bytes = this.random.take16()
    stamp(bytes, ms)
    bytes[6] = ((bytes[6] ?? 0) & 0x0f) | 0x70
    bytes[8] = ((bytes[8] ?? 0) & 0x3f) | 0x80
    return format(bytes)
  }
}
