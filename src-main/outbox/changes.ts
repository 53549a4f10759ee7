import type { MirrorChange } from '../../src-shared/ipc'
import type { ReplayReport } from './replayer'

/**
 * The window's lists a replay changed: a rating sent (or refused) changes what the evaluation
 * shows, a folder or asset write what the assets show. Without telling them, a "pending" mark
 * stays on screen after the write went out, until the page is opened again.
 */
export function changedByReplay(report: Pick<ReplayReport, 'entries'>): MirrorChange[] {
  const changed = new Set<MirrorChange>()
  for (const entry of report.entries) {
    if (entry.outcome === 'pending') continue
    if (entry.kind.startsWith('evaluation.')) changed.add('evaluations')
    else if (entry.kind.startsWith('asset.') || entry.kind.startsWith('folder.')) {
      changed.add('assets')
    }
  }
  return [...changed]
}
