import type {
  FlowSource,
  FlowSummary,
  FlowVersion,
  StoredFlow,
} from '../../../src-shared/domain/flow-editor'
import { docToFlowFile, flowFileToDoc, rebaseFlowFile, setFlowName } from '../flows/document'
import { errorText } from '../shell/errorWords'
import type { SliceWithApi } from './api'
import { createAutosave } from './editorAutosave'
import { editorHistory } from './editorHistory'
import { copyName, NOT_CONNECTED } from './flows'

/** The flow open in the editor, as the main process last told it. */
export interface OpenFlow {
  id: string
  name: string
  source: FlowSource
  /** Only local flows are saved; a service flow or a template is copied before it is edited. */
  readOnly: boolean
  /** What the main process last saved: the base of the next save (a newer one is a CONFLICT). */
  updatedMs: number
  /** Named versions, newest first. */
  versions: FlowVersion[]
}

/**
 * `pending`: edits wait for the autosave; `conflict`: the flow was saved elsewhere and the
 * editor stops saving until the person reloads or saves a copy.
 */
export type SaveStatus = 'saved' | 'pending' | 'saving' | 'failed' | 'conflict'

/** Which flow the editor has open, and keeping it saved: open, autosave, copies, versions. */
export interface EditorPersistenceSlice {
  editor: OpenFlow | null
  editorLoading: boolean
  /** Why the flow could not be opened, or a version not saved, in plain words. */
  editorProblem: string | null
  saveStatus: SaveStatus
  /** Why the last save failed, or what the conflict means, in plain words. */
  saveProblem: string | null

  openFlow: (id: string) => Promise<boolean>
  /** Saves what is pending and leaves the editor. */
  closeFlow: () => Promise<void>
  /** Saves now what waits for the autosave; resolves once it is saved (or could not be). */
  flushSave: () => Promise<void>
  /** After a conflict: drops the unsaved edits and opens what was saved elsewhere. */
  reloadFlow: () => Promise<void>
  /** After a conflict: keeps the edits in a new local flow and opens that one. */
  saveAsCopy: () => Promise<void>
  /** A service flow or template: makes a local copy and opens it for editing. */
  editCopy: () => Promise<void>
  saveVersion: (name: string) => Promise<boolean>
  restoreVersion: (version: number) => Promise<void>
  /** A rename from the list, applied to the open flow (no undo step, no save). */
  followRename: (summary: FlowSummary) => void
}

export const createEditorPersistenceSlice: SliceWithApi<EditorPersistenceSlice> =
  (api) => (set, get, store) => {
    const { setUntracked } = editorHistory(set, store)
    const autosave = createAutosave(api, set, get, store)

    const load = (stored: StoredFlow) => {
      autosave.stop()
      const next = flowFileToDoc(stored.flow)
      autosave.savedAs(next)
      get().replaceDocument(next, {
        editor: {
          id: stored.id,
          name: stored.name,
          source: stored.source,
          readOnly: stored.source !== 'local',
          updatedMs: stored.updatedMs,
          versions: stored.versions,
        },
        editorLoading: false,
        editorProblem: null,
        saveStatus: 'saved',
        saveProblem: null,
      })
      get().resetChecks()
    }

    /** A new local flow named after the open one, or null with the flow list's problem. */
    const copyOfOpen = async (editorId: string, editorName: string) => {
      const name = copyName(
        editorName,
        (get().flows ?? []).map((flow) => flow.name),
      )
      return get().createFlow(name, editorId)
    }

    return {
      editor: null,
      editorLoading: false,
      editorProblem: null,
      saveStatus: 'saved',
      saveProblem: null,

      openFlow: async (id) => {
        const atelier = api()
        if (!atelier) {
          set({ editorProblem: NOT_CONNECTED })
          return false
        }
        if (get().editor) await get().closeFlow()
        set({ editorLoading: true, editorProblem: null })
        const result = await atelier.flows.get({ id })
        if (!result.ok) {
          set({ editorLoading: false, editorProblem: errorText(result.error) })
          return false
        }
        try {
          load(result.value)
        } catch (error) {
          set({
            editorLoading: false,
            editorProblem: error instanceof Error ? error.message : String(error),
          })
          return false
        }
        void get().loadPalette()
        return true
      },

      closeFlow: async () => {
        await get().flushSave()
        autosave.stop()
        autosave.savedAs(null)
        get().replaceDocument(null, {
          editor: null,
          editorProblem: null,
          saveStatus: 'saved',
          saveProblem: null,
        })
        get().resetChecks()
        get().clearRun()
      },

      flushSave: autosave.saveNow,

      reloadFlow: async () => {
        const atelier = api()
        const editor = get().editor
        if (!atelier || !editor) return
        autosave.stop()
        const result = await atelier.flows.get({ id: editor.id })
        if (!result.ok) {
          set({ saveProblem: errorText(result.error) })
          return
        }
        load(result.value)
      },

      saveAsCopy: async () => {
        const atelier = api()
        const { editor, doc } = get()
        if (!atelier || !editor || !doc) return
        autosave.stop()
        const created = await copyOfOpen(editor.id, editor.name)
        if (!created) {
          set({ saveProblem: get().flowsProblem?.message ?? 'The copy could not be made.' })
          return
        }
        const flowId = typeof created.flow.id === 'string' ? created.flow.id : created.id
        const file = rebaseFlowFile(docToFlowFile(doc), { id: flowId, name: created.name })
        const saved = await atelier.flows.save({
          id: created.id,
          flow: file,
          baseUpdatedMs: created.updatedMs,
        })
        if (!saved.ok) {
          set({ saveProblem: errorText(saved.error) })
          return
        }
        load({ ...created, flow: file, updatedMs: saved.value.updatedMs })
        void get().loadFlows()
      },

      editCopy: async () => {
        const editor = get().editor
        if (!editor) return
        const created = await copyOfOpen(editor.id, editor.name)
        if (!created) {
          set({ editorProblem: get().flowsProblem?.message ?? 'The copy could not be made.' })
          return
        }
        load(created)
      },

      saveVersion: async (name) => {
        const atelier = api()
        const editor = get().editor
        if (!atelier || !editor) return false
        await get().flushSave()
        const result = await atelier.flows.saveVersion({ id: editor.id, name })
        if (!result.ok) {
          set({ editorProblem: errorText(result.error) })
          return false
        }
        const current = get().editor
        if (current?.id === editor.id) {
          set({ editor: { ...current, versions: [result.value, ...current.versions] } })
        }
        return true
      },

      restoreVersion: async (version) => {
        const atelier = api()
        const editor = get().editor
        if (!atelier || !editor) return
        // Edits not yet saved are saved first, so the version restored over them can be undone
        // from the versions list later, not lost.
        await get().flushSave()
        const result = await atelier.flows.restoreVersion({ id: editor.id, version })
        if (!result.ok) {
          set({ editorProblem: errorText(result.error) })
          return
        }
        load(result.value)
      },

      followRename: (summary) => {
        const { editor, doc } = get()
        if (editor?.id !== summary.id) return
        const renamed = doc ? setFlowName(doc, summary.name) : null
        // The main process renamed the file too: the renamed document is what is saved.
        if (doc && renamed) autosave.renamed(doc, renamed)
        setUntracked({
          editor: { ...editor, name: summary.name, updatedMs: summary.updatedMs },
          ...(renamed ? { doc: renamed } : {}),
        })
      },
    }
  }
