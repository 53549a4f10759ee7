import { useEffect, useRef } from 'react'
import { useAppStore } from '../store'

/** How often a pending or running evaluation is read again from the service, and how many times. */
const WATCH_MS = 2_000
const WATCH_TIMES = 60

/**
 * Keeps the open evaluation current: the mirror is read again after each sync, and an
 * evaluation being judged is read again from the service until it has its verdict.
 */
export function useEvaluationUpdates(
  id: string | null,
  judging: boolean,
  reload: (fromService: boolean) => Promise<void>,
) {
  const lastOk = useAppStore((s) => s.sync?.lastOkAt ?? null)

  // A sync that ended may have sent a rating waiting in the outbox: read the mirror again.
  const seenSync = useRef(lastOk)
  useEffect(() => {
    if (lastOk === seenSync.current) return
    seenSync.current = lastOk
    void reload(false)
  }, [lastOk, reload])

  useEffect(() => {
    if (!judging) return
    let times = 0
    const timer = setInterval(() => {
      if (++times > WATCH_TIMES) clearInterval(timer)
      else void reload(true)
    }, WATCH_MS)
    return () => {
      clearInterval(timer)
    }
  }, [judging, id, reload])
}
