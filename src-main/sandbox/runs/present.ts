import type { NodeRun, Run } from '../../../src-shared/api'
import { isoTime } from '../clock'
import { blobUrl } from '../core-area'
import type { SandboxServices } from '../services'
import type { StoredRun } from './types'

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value)

const SHA256 = /^[0-9a-f]{64}$/

/**
 * A stored output with a fresh presigned URL on every file: any object that names a stored blob
 * (`sha256` and `content_type`) gets `url` and `expires_at`. The stored output keeps no URL, so a
 * URL never outlives the read that minted it by more than its time to live.
 */
export function withUrls(services: SandboxServices, value: unknown, depth = 0): unknown {
  if (depth > 6) return value
  if (Array.isArray(value)) return value.map((item) => withUrls(services, item, depth + 1))
  if (!isRecord(value)) return value
  const out: Record<string, unknown> = {}
  for (const [key, child] of Object.entries(value)) out[key] = withUrls(services, child, depth + 1)
  if (
    typeof value.sha256 === 'string' &&
    SHA256.test(value.sha256) &&
    typeof value.content_type === 'string'
  ) {
    const { url, expires_at } = blobUrl(services, value.sha256, value.content_type)
    out.url = url
    out.expires_at = isoTime(expires_at)
  }
  return out
}

/** A stored run as the API answers it: internals dropped, output URLs minted now. */
export function presentRun(services: SandboxServices, stored: Partial<StoredRun>): Run {
  const { _sandbox: _internals, ...run } = stored
  if ('output' in run) run.output = withUrls(services, run.output) as Run['output']
  return run as Run
}

export function presentNodeRun(services: SandboxServices, stored: Partial<NodeRun>): NodeRun {
  if (!('output' in stored)) return stored as NodeRun
  return { ...stored, output: withUrls(services, stored.output) } as NodeRun
}
