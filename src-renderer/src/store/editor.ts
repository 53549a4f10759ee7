import type { Connection, EdgeChange, NodeChange, XYPosition } from '@xyflow/react'
import type { TemporalState, ZundoOptions } from 'zundo'
import type { StateCreator, StoreApi } from 'zustand'
import type {
  FlowSource,
  FlowSummary,
  FlowVersion,
  PaletteItem,
  StoredFlow,
} from '../../../src-shared/domain/flow-editor'
import {
  addNodes,
  connect,
  copyNodes,
  disconnectInputs,
  disconnectRetries,
  docToFlowFile,
  edgesOf,
  flowFileToDoc,
  groupNodes,
  groupsOfNodes,
  moveNodes,
  nodeFromPalette,
  pasteNodes,
  rebaseFlowFile,
  removeNodes,
  setFlowName,
  ungroup,
  type autoLayout,
  type CanvasNode,
  type ClipboardNodes,
  type EditorDoc,
  type Size,
} from '../flows/document'
import { errorText } from '../shell/errorWords'
import { copyName, NOT_CONNECTED } from './flows'
import type { AppState } from './index'

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

export interface EditorSelection {
  nodeIds: string[]
  edgeIds: string[]
  /** Group frames (`NodeGroup.id`), selected on their own, not their nodes. */
  groupIds: string[]
}

/** What undo and redo restore: the document, and nothing else (not the selection, not a run). */
export interface EditorHistory {
  doc: EditorDoc | null
}

export interface EditorSlice {
  editor: OpenFlow | null
  editorLoading: boolean
  /** Why the flow could not be opened, or a version not saved, in plain words. */
  editorProblem: string | null
  /** The document being edited; every change of it is one undo step. */
  doc: EditorDoc | null
  selection: EditorSelection
  /** Node sizes as the canvas measured them (for React Flow and the auto-layout). */
  measured: Record<string, Size>
  clipboard: ClipboardNodes | null
  saveStatus: SaveStatus
  /** Why the last save failed, or what the conflict means, in plain words. */
  saveProblem: string | null

  openFlow: (id: string) => Promise<boolean>
  /** Saves what is pending and leaves the editor. */
  closeFlow: () => Promise<void>
  /**
   * Applies one edit as one undo step. Edits sharing `merge.key` within `merge.windowMs` of each
   * other make a single step (typing a prompt, dragging a node).
   */
  editDoc: (change: (doc: EditorDoc) => EditorDoc, merge?: EditMerge) => void
  applyNodeChanges: (changes: NodeChange<CanvasNode>[]) => void
  applyEdgeChanges: (changes: EdgeChange[]) => void
  connectPorts: (connection: Connection) => void
  addPaletteNode: (item: PaletteItem, position?: XYPosition) => void
  select: (selection: Partial<EditorSelection>) => void
  /** Deletes the selected nodes and edges; a selected group loses its frame, not its nodes. */
  deleteSelection: () => void
  /** Puts the selected nodes in a new group, as one undo step, and selects the group. */
  groupSelection: () => void
  /** Removes the selected groups, or else the groups of the selected nodes (their frames). */
  ungroupSelection: () => void
  copySelection: () => void
  pasteClipboard: () => void
  /**
   * Lays the nodes out with `layout` (the document's `autoLayout`, handed in by the editor: the
   * layout library comes with the editor's chunk, not with the store the start screen loads).
   */
  layoutNodes: (layout: typeof autoLayout) => void
  undo: () => void
  redo: () => void
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

export interface EditMerge {
  key: string
  windowMs: number
}

/** How long the editor waits after the last edit before it saves. */
export const AUTOSAVE_MS = 800
/** Typing into one field within this time is one undo step. */
export const TYPING_MERGE_MS = 1000

const CONFLICT_WORDS =
  'This flow was changed somewhere else (another window or the command line) after you opened it, so your latest edits are not saved. Reload it to get the other version (your unsaved edits are dropped), or save your version as a copy.'

/** Undo and redo cover the document only; other state changes leave the history alone. */
export const EDITOR_HISTORY: ZundoOptions<AppState, EditorHistory> = {
  partialize: (state) => ({ doc: state.doc }),
  equality: (past, current) => past.doc === current.doc,
  limit: 200,
}

type HistoryStore = StoreApi<TemporalState<EditorHistory>>

/** zundo puts its own store on the app store as `temporal`; the mutator types leave it unknown. */
const historyOf = (store: StoreApi<AppState>): HistoryStore =>
  (store as unknown as { temporal: HistoryStore }).temporal

const NO_SELECTION: EditorSelection = { nodeIds: [], edgeIds: [], groupIds: [] }

export const createEditorSlice: StateCreator<AppState, [], [], EditorSlice> = (set, get, store) => {
  const history = () => historyOf(store)
  /** The document last saved (or loaded): the autosave skips it, an undo back to it included. */
  let savedDoc: EditorDoc | null = null
  let saveTimer: ReturnType<typeof setTimeout> | undefined
  let saving: Promise<void> | null = null
  let lastEdit: { key: string; at: number } | null = null
  let dragKey: string | null = null
  let drags = 0

  const stopTimer = () => {
    if (saveTimer !== undefined) clearTimeout(saveTimer)
    saveTimer = undefined
  }

  /** Sets the document without an undo step: loading, a rename, a restored version. */
  const setUntracked = (partial: Partial<AppState>) => {
    const temporal = history().getState()
    temporal.pause()
    set(partial)
    temporal.resume()
  }

  const load = (stored: StoredFlow) => {
    stopTimer()
    const next = flowFileToDoc(stored.flow)
    savedDoc = next
    lastEdit = null
    setUntracked({
      editor: {
        id: stored.id,
        name: stored.name,
        source: stored.source,
        readOnly: stored.source !== 'local',
        updatedMs: stored.updatedMs,
        versions: stored.versions,
      },
      doc: next,
      editorLoading: false,
      editorProblem: null,
      selection: NO_SELECTION,
      measured: {},
      saveStatus: 'saved',
      saveProblem: null,
    })
    history().getState().clear()
    get().resetChecks()
  }

  const scheduleSave = () => {
    stopTimer()
    saveTimer = setTimeout(() => {
      saveTimer = undefined
      void saveNow()
    }, AUTOSAVE_MS)
  }

  const saveNow = async (): Promise<void> => {
    stopTimer()
    if (saving) {
      await saving
      // The edits made while that save ran are saved now, or scheduled by then.
      if (saveTimer !== undefined) await saveNow()
      return
    }
    const { editor, doc, saveStatus } = get()
    const api = window.atelier
    if (!editor || !doc || editor.readOnly || saveStatus === 'conflict') return
    if (doc === savedDoc) {
      set({ saveStatus: 'saved', saveProblem: null })
      return
    }
    if (!api) {
      set({ saveStatus: 'failed', saveProblem: NOT_CONNECTED })
      return
    }
    set({ saveStatus: 'saving' })
    saving = (async () => {
      const result = await api.flows
        .save({ id: editor.id, flow: docToFlowFile(doc), baseUpdatedMs: editor.updatedMs })
        .catch((error: unknown) => ({
          ok: false as const,
          error: {
            code: 'UNAVAILABLE',
            message: error instanceof Error ? error.message : String(error),
          },
        }))
      const current = get()
      if (current.editor?.id !== editor.id) return
      if (result.ok) {
        savedDoc = doc
        const newer = current.doc !== doc
        set({
          editor: { ...current.editor, updatedMs: result.value.updatedMs },
          saveStatus: newer ? 'pending' : 'saved',
          saveProblem: null,
        })
        if (newer) scheduleSave()
      } else if (result.error.code === 'CONFLICT') {
        stopTimer()
        set({ saveStatus: 'conflict', saveProblem: CONFLICT_WORDS })
      } else {
        set({ saveStatus: 'failed', saveProblem: errorText(result.error) })
      }
    })()
    try {
      await saving
    } finally {
      saving = null
    }
  }

  const onDocChanged = (state: AppState) => {
    const { editor, doc } = state
    if (!editor || !doc || editor.readOnly || state.saveStatus === 'conflict') return
    if (doc === savedDoc) {
      stopTimer()
      if (!saving) set({ saveStatus: 'saved', saveProblem: null })
      return
    }
    // Set only when it changes: a drag changes the document at every move, and each set wakes
    // every subscriber of the store.
    if (state.saveStatus !== 'saving' && state.saveStatus !== 'pending') {
      set({ saveStatus: 'pending' })
    }
    scheduleSave()
  }

  store.subscribe((state, previous) => {
    if (state.doc !== previous.doc) onDocChanged(state)
  })

  const editable = () => {
    const { doc, editor } = get()
    return doc && editor && !editor.readOnly ? doc : null
  }

  const removeSelected = (
    nodeIds: ReadonlySet<string>,
    edgeIds: ReadonlySet<string>,
    groupIds: ReadonlySet<string> = new Set(),
  ) => {
    const doc = editable()
    if (!doc || (nodeIds.size === 0 && edgeIds.size === 0 && groupIds.size === 0)) return
    get().editDoc((current) => {
      const feeds = new Set<string>()
      const retries = new Set<string>()
      for (const edge of edgesOf(current.nodes)) {
        if (!edgeIds.has(edge.id) || !edge.targetHandle) continue
        ;(edge.data?.retry ? retries : feeds).add(edge.targetHandle)
      }
      const unlinked = disconnectRetries(disconnectInputs(current, feeds), retries)
      return removeNodes(ungroup(unlinked, groupIds), nodeIds)
    })
    const selection = get().selection
    set({
      selection: {
        nodeIds: selection.nodeIds.filter((id) => !nodeIds.has(id)),
        edgeIds: selection.edgeIds.filter((id) => !edgeIds.has(id)),
        groupIds: selection.groupIds.filter((id) => !groupIds.has(id)),
      },
    })
  }

  return {
    editor: null,
    editorLoading: false,
    editorProblem: null,
    doc: null,
    selection: NO_SELECTION,
    measured: {},
    clipboard: null,
    saveStatus: 'saved',
    saveProblem: null,

    openFlow: async (id) => {
      const api = window.atelier
      if (!api) {
        set({ editorProblem: NOT_CONNECTED })
        return false
      }
      if (get().editor) await get().closeFlow()
      set({ editorLoading: true, editorProblem: null })
      const result = await api.flows.get({ id })
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
      stopTimer()
      savedDoc = null
      lastEdit = null
      setUntracked({
        editor: null,
        doc: null,
        editorProblem: null,
        selection: NO_SELECTION,
        measured: {},
        saveStatus: 'saved',
        saveProblem: null,
      })
      history().getState().clear()
      get().resetChecks()
      get().clearRun()
    },

    editDoc: (change, merge) => {
      const doc = editable()
      if (!doc) return
      const next = change(doc)
      if (next === doc) return
      const now = Date.now()
      const merging =
        merge !== undefined && lastEdit?.key === merge.key && now - lastEdit.at <= merge.windowMs
      lastEdit = merge ? { key: merge.key, at: now } : null
      if (merging) setUntracked({ doc: next })
      else set({ doc: next })
    },

    applyNodeChanges: (changes) => {
      const positions = new Map<string, XYPosition>()
      let dragEnded = false
      let measured: Record<string, Size> | null = null
      let selected: Set<string> | null = null
      const removed = new Set<string>()
      for (const change of changes) {
        switch (change.type) {
          case 'position':
            if (change.position) positions.set(change.id, change.position)
            if (change.dragging === false) dragEnded = true
            break
          case 'dimensions':
            if (change.dimensions) {
              measured ??= { ...get().measured }
              measured[change.id] = change.dimensions
            }
            break
          case 'select':
            selected ??= new Set(get().selection.nodeIds)
            if (change.selected) selected.add(change.id)
            else selected.delete(change.id)
            break
          case 'remove':
            removed.add(change.id)
            break
          default:
            break
        }
      }
      if (measured) set({ measured })
      if (selected) set({ selection: { ...get().selection, nodeIds: [...selected] } })
      if (positions.size > 0) {
        // One drag, however many moves it reports, is one undo step.
        dragKey ??= `drag-${++drags}`
        get().editDoc((doc) => moveNodes(doc, positions), {
          key: dragKey,
          windowMs: Number.POSITIVE_INFINITY,
        })
      }
      if (dragEnded) dragKey = null
      if (removed.size > 0) removeSelected(removed, new Set())
    },

    applyEdgeChanges: (changes) => {
      let selected: Set<string> | null = null
      const removed = new Set<string>()
      for (const change of changes) {
        if (change.type === 'select') {
          selected ??= new Set(get().selection.edgeIds)
          if (change.selected) selected.add(change.id)
          else selected.delete(change.id)
        } else if (change.type === 'remove') removed.add(change.id)
      }
      if (selected) set({ selection: { ...get().selection, edgeIds: [...selected] } })
      if (removed.size > 0) removeSelected(new Set(), removed)
    },

    connectPorts: (connection) => {
      get().editDoc((doc) => connect(doc, connection))
    },

    addPaletteNode: (item, position) => {
      const doc = editable()
      if (!doc) return
      const at = position ?? nextFreeSpot(doc.nodes)
      const node = nodeFromPalette(doc.nodes, item, at)
      get().editDoc((current) => addNodes(current, [node]))
      set({ selection: { nodeIds: [node.id], edgeIds: [], groupIds: [] } })
    },

    select: (selection) => {
      set({ selection: { ...get().selection, ...selection } })
    },

    deleteSelection: () => {
      const { nodeIds, edgeIds, groupIds } = get().selection
      removeSelected(new Set(nodeIds), new Set(edgeIds), new Set(groupIds))
    },

    groupSelection: () => {
      const doc = editable()
      if (!doc) return
      const { doc: grouped, groupId } = groupNodes(doc, get().selection.nodeIds)
      if (groupId === null) return
      get().editDoc(() => grouped)
      // Selected, so that the inspector offers to rename it and Ctrl+Shift+G undoes it.
      set({ selection: { nodeIds: [], edgeIds: [], groupIds: [groupId] } })
    },

    ungroupSelection: () => {
      const doc = editable()
      if (!doc) return
      const { nodeIds, groupIds } = get().selection
      const chosen =
        groupIds.length > 0
          ? new Set(groupIds)
          : new Set(groupsOfNodes(doc, new Set(nodeIds)).map((group) => group.id))
      if (chosen.size === 0) return
      get().editDoc((current) => ungroup(current, chosen))
      set({ selection: { ...get().selection, groupIds: [] } })
    },

    copySelection: () => {
      const { doc, selection } = get()
      if (!doc) return
      const clipboard = copyNodes(doc, new Set(selection.nodeIds))
      if (clipboard) set({ clipboard })
    },

    pasteClipboard: () => {
      const clipboard = get().clipboard
      if (!clipboard || !editable()) return
      let pasted: string[] = []
      get().editDoc((doc) => {
        const result = pasteNodes(doc, clipboard)
        pasted = result.pastedIds
        return result.doc
      })
      // A second paste lands further on, not on top of the first.
      set({
        selection: { nodeIds: pasted, edgeIds: [], groupIds: [] },
        clipboard: {
          nodes: clipboard.nodes.map((node) => ({
            ...node,
            x: (node.x ?? 0) + 40,
            y: (node.y ?? 0) + 40,
          })),
        },
      })
    },

    layoutNodes: (layout) => {
      const measured = get().measured
      get().editDoc((doc) => moveNodes(doc, layout(doc.nodes, measured)))
    },

    undo: () => {
      lastEdit = null
      history().getState().undo()
    },

    redo: () => {
      lastEdit = null
      history().getState().redo()
    },

    flushSave: saveNow,

    reloadFlow: async () => {
      const api = window.atelier
      const editor = get().editor
      if (!api || !editor) return
      stopTimer()
      const result = await api.flows.get({ id: editor.id })
      if (!result.ok) {
        set({ saveProblem: errorText(result.error) })
        return
      }
      load(result.value)
    },

    saveAsCopy: async () => {
      const api = window.atelier
      const { editor, doc } = get()
      if (!api || !editor || !doc) return
      stopTimer()
      const name = copyName(
        editor.name,
        (get().flows ?? []).map((flow) => flow.name),
      )
      const created = await get().createFlow(name, editor.id)
      if (!created) {
        set({ saveProblem: get().flowsProblem?.message ?? 'The copy could not be made.' })
        return
      }
      const flowId = typeof created.flow.id === 'string' ? created.flow.id : created.id
      const file = rebaseFlowFile(docToFlowFile(doc), { id: flowId, name: created.name })
      const saved = await api.flows.save({
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
      const name = copyName(
        editor.name,
        (get().flows ?? []).map((flow) => flow.name),
      )
      const created = await get().createFlow(name, editor.id)
      if (!created) {
        set({ editorProblem: get().flowsProblem?.message ?? 'The copy could not be made.' })
        return
      }
      load(created)
    },

    saveVersion: async (name) => {
      const api = window.atelier
      const editor = get().editor
      if (!api || !editor) return false
      await get().flushSave()
      const result = await api.flows.saveVersion({ id: editor.id, name })
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
      const api = window.atelier
      const editor = get().editor
      if (!api || !editor) return
      // Edits not yet saved are saved first, so the version restored over them can be undone
      // from the versions list later, not lost.
      await get().flushSave()
      const result = await api.flows.restoreVersion({ id: editor.id, version })
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
      if (doc && renamed && savedDoc === doc) savedDoc = renamed
      setUntracked({
        editor: { ...editor, name: summary.name, updatedMs: summary.updatedMs },
        ...(renamed ? { doc: renamed } : {}),
      })
    },
  }
}

/** Where a node added without a drop point goes: right of everything, at the top. */
function nextFreeSpot(nodes: readonly CanvasNode[]): XYPosition {
  if (nodes.length === 0) return { x: 0, y: 0 }
  const right = Math.max(...nodes.map((node) => node.position.x + (node.width ?? 220)))
  const top = Math.min(...nodes.map((node) => node.position.y))
  return { x: right + 80, y: top }
}
