import { useEffect, useState } from 'react'
import { useShallow } from 'zustand/react/shallow'
import type { SyncStatus } from '../../../src-shared/domain/sync'
import { useAppStore } from '../store'
import { matches } from './shortcuts'
import { ago, collectionWords, inTime, progressWords } from './syncWords'

/** The current time, renewed every `everyMs`, so "2 min ago" moves on by itself. */
function useNow(everyMs: number): number {
  const [now, setNow] = useState(() => Date.now())
  useEffect(() => {
    const timer = setInterval(() => {
      setNow(Date.now())
    }, everyMs)
    return () => {
      clearInterval(timer)
    }
  }, [everyMs])
  return now
}

function headline(status: SyncStatus | null, problem: string | null, now: number): string {
  if (problem !== null) return 'Sync unavailable'
  if (status === null) return 'Checking sync…'
  switch (status.state) {
    case 'syncing':
      return status.progress
        ? `Syncing ${collectionWords(status.progress.collection)}…`
        : 'Syncing…'
    case 'offline':
      return 'Offline — showing what was synced'
    case 'unauthorized':
      return 'Key refused'
    case 'error':
      return 'Sync stopped'
    case 'idle':
      return status.lastOkAt === null ? 'Not synced yet' : `Synced ${ago(status.lastOkAt, now)}`
  }
}

/** What hovering the status says: the reason in full, and when Atelier tries again. */
function details(status: SyncStatus | null, problem: string | null, now: number): string {
  if (problem !== null) return problem
  if (status === null) return ''
  const parts: string[] = []
  if (status.state !== 'idle' && status.state !== 'syncing' && status.last?.message) {
    parts.push(status.last.message)
  }
  if (status.lastOkAt !== null && status.state !== 'idle') {
    parts.push(`Last synced ${ago(status.lastOkAt, now)}.`)
  }
  if (status.nextAt !== null && status.state !== 'syncing') {
    parts.push(`Next sync ${inTime(status.nextAt, now)}.`)
  }
  return parts.join(' ')
}

function ProgressBar({ status }: { status: SyncStatus }) {
  const progress = status.progress
  const total = progress?.total
  const known = progress !== null && total !== undefined && total > 0
  const words = progress
    ? `${collectionWords(progress.collection)}: ${progressWords(progress)}`
    : 'starting'
  return (
    <div
      className={known ? 'sync-bar' : 'sync-bar indeterminate'}
      role="progressbar"
      aria-label="Sync progress"
      aria-valuemin={known ? 0 : undefined}
      aria-valuemax={known ? total : undefined}
      aria-valuenow={known ? Math.min(progress.done, total) : undefined}
      aria-valuetext={words}
    >
      <span style={known ? { width: `${Math.min(100, (progress.done / total) * 100)}%` } : {}} />
    </div>
  )
}

/**
 * The foot of the sidebar: how fresh the local copy is, what the sync is doing, and the one
 * thing to do about it (sync now, retry, fix the key). F5 syncs too; Ctrl+R stays Electron's
 * reload.
 */
export function SyncStatusArea() {
  const { sync, syncAt, problem, connectSync, requestSync, goTo } = useAppStore(
    useShallow((s) => ({
      sync: s.sync,
      syncAt: s.syncAt,
      problem: s.syncProblem,
      connectSync: s.connectSync,
      requestSync: s.requestSync,
      goTo: s.goTo,
    })),
  )
  const sandbox = useAppStore(
    useShallow((s) => ({
      inUse: s.account?.backendKind === 'sandbox',
      switching: s.sandboxSwitching,
      switchSandbox: s.switchSandbox,
    })),
  )
  const now = Math.max(useNow(15_000), syncAt)

  useEffect(() => connectSync(), [connectSync])

  useEffect(() => {
    const onKey = (event: KeyboardEvent) => {
      if (!matches('sync', event)) return
      event.preventDefault()
      void requestSync()
    }
    window.addEventListener('keydown', onKey)
    return () => {
      window.removeEventListener('keydown', onKey)
    }
  }, [requestSync])

  const state = problem !== null ? 'error' : (sync?.state ?? 'idle')
  const syncing = sync?.state === 'syncing'
  const progress = sync?.progress ?? null
  return (
    <section
      className={`sync-status ${state}`}
      aria-label="Sync"
      title={details(sync, problem, now) || undefined}
    >
      <div className="sync-head">
        <span className="sync-dot" aria-hidden="true" />
        <span role="status">{headline(sync, problem, now)}</span>
      </div>
      {sync && syncing ? (
        <>
          <ProgressBar status={sync} />
          <div className="sync-detail">
            {progress
              ? `${progressWords(progress)} · step ${progress.step} of ${progress.steps}`
              : 'Starting…'}
          </div>
        </>
      ) : null}
      <div className="sync-actions">
        {sync?.state === 'unauthorized' ? (
          <button
            type="button"
            className="link-button"
            onClick={() => {
              goTo('settings')
            }}
          >
            Check the key in Settings
          </button>
        ) : null}
        {sandbox.inUse && sync !== null ? (
          <SandboxSwitch offline={sync.state === 'offline'} {...sandbox} />
        ) : null}
        {sync?.state === 'offline' || sync?.state === 'error' ? (
          <button
            type="button"
            className="small-button"
            onClick={() => {
              void requestSync()
            }}
          >
            Retry
          </button>
        ) : null}
        {sync?.state !== 'offline' && sync?.state !== 'error' ? (
          <button
            type="button"
            className="small-button"
            title="Sync now (F5)"
            disabled={sync === null || syncing}
            onClick={() => {
              void requestSync()
            }}
          >
            Sync now
          </button>
        ) : null}
      </div>
    </section>
  )
}

/**
 * Working with the local sandbox, the app goes offline on purpose by stopping it, and comes
 * back by starting it: the same as Settings' card, where the sync status is.
 */
function SandboxSwitch({
  offline,
  switching,
  switchSandbox,
}: {
  offline: boolean
  switching: 'stop' | 'start' | null
  switchSandbox: (to: 'stop' | 'start') => Promise<void>
}) {
  const to = offline ? 'start' : 'stop'
  return (
    <button
      type="button"
      className="small-button"
      data-testid="sandbox-switch"
      title={
        offline
          ? 'Start the local sandbox again: Atelier is back online at once.'
          : 'Stop the local sandbox to work offline: what was synced stays browsable.'
      }
      disabled={switching !== null}
      onClick={() => {
        void switchSandbox(to)
      }}
    >
      {switching === 'stop'
        ? 'Stopping…'
        : switching === 'start'
          ? 'Starting…'
          : offline
            ? 'Start the sandbox'
            : 'Work offline'}
    </button>
  )
}
