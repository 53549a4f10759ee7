import type { Run } from '../../../src-shared/api'
import type { ServiceClient } from '../../service'
import type { MediaRef } from '../types'

/**
 * A URL sent to the service must still work when the service reads it, which can be a while
 * after dispatch (a queued run): one that expires sooner than this is refreshed first.
 */
export const FRESH_FOR_MS = 10 * 60 * 1000

/**
 * When a presigned URL stops working, from its own query: `expires` / `Expires` (Unix seconds:
 * the sandbox, CloudFront, Azure-style), or a signing date plus a lifetime in seconds
 * (`X-Amz-Date` + `X-Amz-Expires`, `X-Goog-Date` + `X-Goog-Expires`). Undefined when the URL
 * does not say: it is then sent as it is.
 */
export function presignedExpiryMs(url: string): number | undefined {
  let query: URLSearchParams
  try {
    query = new URL(url).searchParams
  } catch {
    return undefined
  }
  const epoch = query.get('expires') ?? query.get('Expires')
  if (epoch !== null && /^\d+$/.test(epoch)) return Number(epoch) * 1000
  for (const vendor of ['Amz', 'Goog']) {
    const date = query.get(`X-${vendor}-Date`)
    const lifetime = query.get(`X-${vendor}-Expires`)
    const stamp = date?.match(/^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/)
    if (stamp && lifetime !== null && /^\d+$/.test(lifetime)) {
      const [, y, mo, d, h, mi, s] = stamp
      return Date.parse(`${y}-${mo}-${d}T${h}:${mi}:${s}Z`) + Number(lifetime) * 1000
    }
  }
  return undefined
}

/** Every file of a run's output with its sha256, wherever it sits in the output. */
function filesOf(value: unknown, found: Map<string, string>): void {
  if (Array.isArray(value)) {
    for (const item of value) filesOf(item, found)
    return
  }
  if (typeof value !== 'object' || value === null) return
  const record = value as Record<string, unknown>
  if (typeof record.url === 'string' && typeof record.sha256 === 'string') {
    found.set(record.sha256.toLowerCase(), record.url)
  }
  for (const child of Object.values(record)) filesOf(child, found)
}

/**
 * The URL to send for a media input: its own while it stays valid long enough, otherwise a
 * fresh one from the run that made the file (read once per run and dispatch). A ref no run made,
 * or a run that no longer has the file, keeps its URL: the service then says what is wrong.
 */
export function freshUrls(
  service: { client: ServiceClient; orgId: string; clock: () => number },
  signal?: AbortSignal,
): (ref: MediaRef) => Promise<string> {
  const runs = new Map<string, Promise<Map<string, string>>>()
  return async (ref) => {
    const expires = presignedExpiryMs(ref.url)
    if (expires === undefined || expires > service.clock() + FRESH_FOR_MS) return ref.url
    if (ref.run_id === undefined) return ref.url
    let files = runs.get(ref.run_id)
    if (!files) {
      files = service.client
        .get('/v1/runs/{run_id}', {
          params: { path: { run_id: ref.run_id } },
          headers: { 'X-Organization-Id': service.orgId },
          signal,
        })
        .then((run: Run) => {
          const found = new Map<string, string>()
          filesOf(run.output, found)
          return found
        })
        // A run that cannot be read leaves the URL as it is; the service says it expired.
        .catch(() => new Map<string, string>())
      runs.set(ref.run_id, files)
    }
    return (await files).get(ref.sha256) ?? ref.url
  }
}
