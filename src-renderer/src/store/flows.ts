import type { FlowSummary, StoredFlow } from '../../../src-shared/domain/flow-editor'
import type { IpcError } from '../../../src-shared/ipc/result'
import { errorText } from '../shell/errorWords'
import type { SliceWithApi } from './api'

/** Something the flow list could not do, in plain words, with a flow file's problems if any. */
export interface FlowListProblem {
  message: string
  issues: { path: string; message: string }[]
}

export interface FlowListSlice {
  /** Local flows, the service's and templates, newest first; null until loaded. */
  flows: FlowSummary[] | null
  flowsLoading: boolean
  flowsProblem: FlowListProblem | null
  /** The flow just deleted, while its "Undo" is offered. */
  deletedFlow: FlowSummary | null
  loadFlows: () => Promise<void>
  /** A new local flow, empty or copied from `from` (duplicate, or start from a template). */
  createFlow: (name: string, from?: string) => Promise<StoredFlow | null>
  duplicateFlow: (id: string) => Promise<StoredFlow | null>
  renameFlow: (id: string, name: string) => Promise<boolean>
  /** Moves a local flow to the trash and offers to undo it. */
  deleteFlow: (id: string) => Promise<void>
  undoDelete: () => Promise<void>
  dismissDeleted: () => void
  /** A flow file's text becomes a new local flow. */
  importFlow: (json: string) => Promise<StoredFlow | null>
  /** The flow file to download, named as the main process suggests. */
  exportFlow: (id: string) => Promise<{ fileName: string; json: string } | null>
  dismissFlowsProblem: () => void
  /**
   * Another profile is in use: the list held is another world's, so it goes at once (never
   * shown under the new profile) and is read again. Reading it now, while the new profile's
   * service is likely reachable, also brings its templates onto this computer for offline use.
   */
  forgetFlows: () => Promise<void>
}

export const NOT_CONNECTED =
  'This page is not connected to Atelier, so flows cannot be opened or saved here.'

export const problemOf = (error: IpcError): FlowListProblem => ({
  message: errorText(error),
  issues: error.issues ?? [],
})

const byNewest = (a: FlowSummary, b: FlowSummary) => b.updatedMs - a.updatedMs

/** The name a copy gets: "Portrait copy", or "Portrait copy 2" when that is taken. */
export function copyName(name: string, taken: readonly string[]): string {
  const base = `${name.slice(0, 190)} copy`
  const names = new Set(taken)
  if (!names.has(base)) return base
  for (let n = 2; ; n++) {
    if (!names.has(`${base} ${n}`)) return `${base} ${n}`
  }
}

export const createFlowListSlice: SliceWithApi<FlowListSlice> = (atelier) => (set, get) => {
  const remember = (flow: FlowSummary) => {
    const others = (get().flows ?? []).filter((item) => item.id !== flow.id)
    set({ flows: [flow, ...others].sort(byNewest) })
  }
  const summaryOf = (stored: StoredFlow): FlowSummary => ({
    id: stored.id,
    name: stored.name,
    source: stored.source,
    description: stored.description,
    nodeCount: stored.nodeCount,
    updatedMs: stored.updatedMs,
  })

  return {
    flows: null,
    flowsLoading: false,
    flowsProblem: null,
    deletedFlow: null,
    loadFlows: async () => {
      const api = atelier()
      if (!api) {
        set({ flowsProblem: { message: NOT_CONNECTED, issues: [] } })
        return
      }
      set({ flowsLoading: true })
      const result = await api.flows.list()
      if (result.ok) set({ flows: [...result.value].sort(byNewest), flowsProblem: null })
      else set({ flowsProblem: problemOf(result.error) })
      set({ flowsLoading: false })
    },
    createFlow: async (name, from) => {
      const api = atelier()
      if (!api) return null
      const result = await api.flows.create(from === undefined ? { name } : { name, from })
      if (!result.ok) {
        set({ flowsProblem: problemOf(result.error) })
        return null
      }
      remember(summaryOf(result.value))
      return result.value
    },
    duplicateFlow: async (id) => {
      const flows = get().flows ?? []
      const original = flows.find((flow) => flow.id === id)
      if (!original) return null
      const name = copyName(
        original.name,
        flows.map((flow) => flow.name),
      )
      return get().createFlow(name, id)
    },
    renameFlow: async (id, name) => {
      const api = atelier()
      if (!api) return false
      // A rename moves the flow's `updatedMs`: edits not yet saved go first, or they would conflict.
      if (get().editor?.id === id) await get().flushSave()
      const result = await api.flows.rename({ id, name })
      if (!result.ok) {
        set({ flowsProblem: problemOf(result.error) })
        return false
      }
      remember(result.value)
      get().followRename(result.value)
      return true
    },
    deleteFlow: async (id) => {
      const api = atelier()
      if (!api) return
      const flow = get().flows?.find((item) => item.id === id)
      const result = await api.flows.delete({ id })
      if (!result.ok) {
        set({ flowsProblem: problemOf(result.error) })
        return
      }
      set({
        flows: (get().flows ?? []).filter((item) => item.id !== id),
        deletedFlow: flow ?? null,
      })
    },
    undoDelete: async () => {
      const api = atelier()
      const deleted = get().deletedFlow
      if (!api || !deleted) return
      const result = await api.flows.restore({ id: deleted.id })
      if (!result.ok) {
        set({ flowsProblem: problemOf(result.error) })
        return
      }
      set({ deletedFlow: null })
      remember(result.value)
    },
    dismissDeleted: () => {
      set({ deletedFlow: null })
    },
    importFlow: async (json) => {
      const api = atelier()
      if (!api) return null
      const result = await api.flows.import({ json })
      if (!result.ok) {
        set({ flowsProblem: problemOf(result.error) })
        return null
      }
      remember(summaryOf(result.value))
      return result.value
    },
    exportFlow: async (id) => {
      const api = atelier()
      if (!api) return null
      // The file is written from what was saved: unsaved edits of the open flow go first.
      if (get().editor?.id === id) await get().flushSave()
      const result = await api.flows.export({ id })
      if (!result.ok) {
        set({ flowsProblem: problemOf(result.error) })
        return null
      }
      return result.value
    },
    dismissFlowsProblem: () => {
      set({ flowsProblem: null })
    },
    forgetFlows: async () => {
      set({ flows: null, flowsProblem: null, deletedFlow: null })
      if (get().editor) await get().closeFlow()
      await get().loadFlows()
    },
  }
}
