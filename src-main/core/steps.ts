import { join } from 'node:path'
import { MediaStore } from '../media-store'
import { OutboxReplayer, type ReplayReport } from '../outbox'
import { ledgerPins, MediaFetcher } from '../sync'
import type { AfterSyncHook } from './after-sync'

const MIB = 1024 * 1024

/** The media store's folder under the home, shared by the app and `atelier sync`. */
export const MEDIA_DIR = 'media'

/**
 * 2 GiB: room for tens of thousands of outputs and thumbnails, while staying small next to a
 * creator's disk. Least-recently-used files beyond it go; what the ledger needs never does.
 */
export const MEDIA_CAP_BYTES = 2 * 1024 ** 3

/** Runs and assets looked at per pass: the newest first, then where the last pass stopped. */
const MEDIA_PASS_LIMIT = 200

/**
 * Writes made offline go first, as soon as the service answers again: a pull that just ended
 * well says it does. Skipped when the pull did not reach the service, since the replay would
 * only fail in the same way.
 */
export function outboxStep(
  /** Told after each replay, for the window to show what it sent (see `changedByReplay`). */
  onReplayed?: (report: ReplayReport) => void,
): AfterSyncHook {
  return {
    name: 'outbox',
    run: async ({ result, client, databases, profile, orgId, signal, logger, progress }) => {
      if (result.state !== 'ok') return undefined
      const replayer = new OutboxReplayer({
        client,
        ledger: databases.ledger,
        mirror: databases.mirror,
        profileName: profile,
        orgId,
      })
      const report = await replayer.replay({ signal })
      onReplayed?.(report)
      progress(report.sent + report.rejected, report.sent + report.rejected + report.pending)
      if (report.sent + report.rejected > 0 || report.state !== 'ok') {
        logger.info('outbox replayed', { ...report, entries: undefined })
      }
      const words = `${String(report.sent)} sent, ${String(report.rejected)} refused, ${String(report.pending)} waiting`
      return {
        summary: report.state === 'ok' ? words : `${words} — ${report.message ?? report.state}`,
        report,
      }
    },
  }
}

/**
 * Presigned output URLs expire, so finished runs' outputs and assets' thumbnails are downloaded
 * after every pull. The store is opened on first use and closed with the core.
 */
export function mediaStep(
  home: string,
  /** Read before each pass: a cap changed in Settings applies to the next one. */
  maxBytes: () => number = () => MEDIA_CAP_BYTES,
): AfterSyncHook & { close: () => Promise<void> } {
  let store: MediaStore | null = null
  let cap = maxBytes()
  return {
    name: 'media',
    run: async ({ result, client, databases, orgId, signal, logger, progress }) => {
      if (result.state !== 'ok') return undefined
      store ??= new MediaStore({
        dir: join(home, MEDIA_DIR),
        maxBytes: cap,
        isPinned: ledgerPins(databases.ledger),
      })
      if (maxBytes() !== cap) {
        cap = maxBytes()
        await store.setMaxBytes(cap)
      }
      const fetcher = new MediaFetcher({ client, mirror: databases.mirror, media: store, orgId })
      const report = await fetcher.pass({
        limit: MEDIA_PASS_LIMIT,
        signal,
        onProgress: (p) => {
          progress(p.done, p.total)
        },
      })
      if (report.downloaded > 0 || report.failed.length > 0 || report.state !== 'ok') {
        logger.info('media pass', {
          state: report.state,
          downloaded: report.downloaded,
          bytes: report.bytes,
          failed: report.failed.length,
        })
      }
      const words = `${String(report.downloaded)} files downloaded (${(report.bytes / MIB).toFixed(1)} MiB), ${String(report.skipped)} already here, ${String(report.failed.length)} failed`
      return {
        summary: report.state === 'ok' ? words : `${words} — ${report.message ?? report.state}`,
        report,
      }
    },
    close: async () => {
      await store?.close()
      store = null
    },
  }
}
