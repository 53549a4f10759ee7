import type { SyncStatus } from '../../../src-shared/domain/sync'
import type { IpcEvents } from '../../../src-shared/ipc/events'
import { errorText } from '../shell/errorWords'
import type { SliceWithApi } from './api'

export type AppNotice = IpcEvents['app.notice']

export interface SyncSlice {
  /** The background sync as main last told it; null until it has. */
  sync: SyncStatus | null
  /** When `sync` arrived (epoch ms): "in 30 s" counts from here, not from the last clock tick. */
  syncAt: number
  /** Why the status cannot be had (the local data could not open), in plain words. */
  syncProblem: string | null
  /** Notices main pushed (a mirror rebuilt), newest last, until dismissed. */
  notices: AppNotice[]
  /** Subscribes to the sync's and the app's events and asks for the status; returns the unsubscribe. */
  connectSync: () => () => void
  /** Starts a sync, or joins the running one. The events tell how it goes. */
  requestSync: () => Promise<void>
  /** The local sandbox being stopped or started from the sidebar; null when neither. */
  sandboxSwitching: 'stop' | 'start' | null
  /**
   * Stops the local sandbox Atelier works with (offline on purpose), or starts it again. The
   * sync's events tell the new state; Settings' card hears the sandbox's.
   */
  switchSandbox: (to: 'stop' | 'start') => Promise<void>
  dismissNotice: (index: number) => void
}

export const createSyncSlice: SliceWithApi<SyncSlice> = (atelier) => (set, get) => ({
  sync: null,
  syncAt: 0,
  syncProblem: null,
  notices: [],
  connectSync: () => {
    const api = atelier()
    if (!api) {
      set({ syncProblem: 'This page is not connected to Atelier, so it cannot sync.' })
      return () => undefined
    }
    const offStatus = api.on('sync.status', (status) => {
      set({ sync: status, syncAt: Date.now(), syncProblem: null })
    })
    const offNotice = api.on('app.notice', (notice) => {
      set({ notices: [...get().notices, notice] })
    })
    void api.sync.getStatus().then((result) => {
      // An event that arrived meanwhile is newer than this answer.
      if (!result.ok) set({ syncProblem: errorText(result.error) })
      else if (get().sync === null) set({ sync: result.value, syncAt: Date.now() })
    })
    return () => {
      offStatus()
      offNotice()
    }
  },
  requestSync: async () => {
    const api = atelier()
    if (!api) return
    const result = await api.sync.start()
    if (!result.ok) set({ syncProblem: errorText(result.error) })
    else if (get().sync === null) set({ sync: result.value, syncAt: Date.now() })
  },
  sandboxSwitching: null,
  switchSandbox: async (to) => {
    const api = atelier()
    if (!api || get().sandboxSwitching !== null) return
    set({ sandboxSwitching: to })
    const result = to === 'stop' ? await api.sandbox.stop() : await api.sandbox.start()
    set({ sandboxSwitching: null })
    if (result.ok) get().setSandboxStatus(result.value)
    else {
      get().pushToast({ tone: 'error', title: 'The sandbox', message: errorText(result.error) })
    }
  },
  dismissNotice: (index) => {
    set({ notices: get().notices.filter((_, i) => i !== index) })
  },
})
