import { useEffect } from 'react'
import { useShallow } from 'zustand/react/shallow'
import { useAppStore } from '../store'

/**
 * The run waiting for the service, in the editor's toolbar: it starts by itself once the sync
 * says the service answers again, and can be canceled until then. One per open flow: closing
 * the flow forgets it, so nothing starts behind the user's back.
 */
export function QueuedRun() {
  const { queuedRun, online, runPhase, startRun, cancelQueuedRun } = useAppStore(
    useShallow((s) => ({
      queuedRun: s.queuedRun,
      online: s.sync?.state === 'idle',
      runPhase: s.runPhase,
      startRun: s.startRun,
      cancelQueuedRun: s.cancelQueuedRun,
    })),
  )
  const free = runPhase === 'idle' || runPhase === 'ended'

  useEffect(() => {
    if (queuedRun === null || !online || !free) return
    cancelQueuedRun()
    void startRun(queuedRun)
  }, [queuedRun, online, free, startRun, cancelQueuedRun])

  if (queuedRun === null) return null
  return (
    <span className="queued-run" data-testid="queued-run">
      Runs when back online
      <button type="button" className="link-button" onClick={cancelQueuedRun}>
        Cancel
      </button>
    </span>
  )
}

/** Beside an offline refusal: the offer to run as soon as the service is back. */
export function QueueOfflineRun() {
  const { offlineRefusal, queueRun } = useAppStore(
    useShallow((s) => ({ offlineRefusal: s.offlineRefusal, queueRun: s.queueRun })),
  )
  if (offlineRefusal === null) return null
  return (
    <button type="button" className="small-button" data-testid="queue-run" onClick={queueRun}>
      Run when back online
    </button>
  )
}
