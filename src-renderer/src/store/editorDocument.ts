import type { Connection, EdgeChange, NodeChange, XYPosition } from '@xyflow/react'
import type { PaletteItem } from '../../../src-shared/domain/flow-editor'
import {
  addNodes,
  connect,
  copyNodes,
  disconnectInputs,
  disconnectRetries,
  edgesOf,
  groupNodes,
  groupsOfNodes,
  moveNodes,
  nodeFromPalette,
  pasteNodes,
  removeNodes,
  setInputValue,
  ungroup,
  type autoLayout,
  type CanvasNode,
  type ClipboardNodes,
  type EditorDoc,
  type Size,
} from '../flows/document'
import { makeRoom } from '../flows/document/makeRoom'
import { editorHistory } from './editorHistory'
import type { AppState } from './index'
import type { StateCreator } from 'zustand'

export interface EditorSelection {
  nodeIds: string[]
  edgeIds: string[]
  /** Group frames (`NodeGroup.id`), selected on their own, not their nodes. */
  groupIds: string[]
}

export interface EditMerge {
  key: string
  windowMs: number
}

/** Typing into one field within this time is one undo step. */
export const TYPING_MERGE_MS = 1000

/** The undo step "Make room for previews": the moves made for nodes a run's previews grew. */
const MAKE_ROOM_KEY = 'make-room-for-previews'

/** The document being edited, what is selected in it, and the clipboard; undo and redo. */
export interface EditorDocumentSlice {
  /** The document being edited; every change of it is one undo step. */
  doc: EditorDoc | null
  selection: EditorSelection
  /** Node sizes as the canvas measured them (for React Flow and the auto-layout). */
  measured: Record<string, Size>
  clipboard: ClipboardNodes | null

  /**
   * Applies one edit as one undo step. Edits sharing `merge.key` within `merge.windowMs` of each
   * other make a single step (typing a prompt, dragging a node).
   */
  editDoc: (change: (doc: EditorDoc) => EditorDoc, merge?: EditMerge) => void
  applyNodeChanges: (changes: NodeChange<CanvasNode>[]) => void
  applyEdgeChanges: (changes: EdgeChange[]) => void
  connectPorts: (connection: Connection) => void
  addPaletteNode: (item: PaletteItem, position?: XYPosition) => void
  /**
   * An Image input node holding an asset ("Use in a flow" of the Assets section), named after
   * it and selected. False when no flow is open for editing or the palette has no Image node.
   */
  addAssetNode: (asset: { id: string; name: string }, position?: XYPosition) => Promise<boolean>
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
  /**
   * Puts a new document (or none) in place, with `rest` in the same change: no undo step, a fresh
   * history, nothing selected or measured. Opening, reloading and closing a flow do this.
   */
  replaceDocument: (doc: EditorDoc | null, rest: Partial<AppState>) => void
}

const NO_SELECTION: EditorSelection = { nodeIds: [], edgeIds: [], groupIds: [] }

export const createEditorDocumentSlice: StateCreator<AppState, [], [], EditorDocumentSlice> = (
  set,
  get,
  store,
) => {
  const { history, setUntracked } = editorHistory(set, store)
  let lastEdit: { key: string; at: number } | null = null
  let dragKey: string | null = null
  let drags = 0

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

  /**
   * Nodes that grew (a run's preview appeared) push aside the neighbours they would now cover.
   * A layout change, so it is saved, as one undo step however many previews arrive one by one
   * (the same merge key until the person edits something else). Not while a drag lasts: the
   * dragged node is where the pointer puts it.
   */
  const makeRoomFor = (before: Record<string, Size>, after: Record<string, Size>) => {
    const doc = editable()
    if (!doc || dragKey !== null) return
    const moved = makeRoom(doc, before, after)
    if (moved.size === 0) return
    get().editDoc((current) => moveNodes(current, moved), {
      key: MAKE_ROOM_KEY,
      windowMs: Number.POSITIVE_INFINITY,
    })
  }

  return {
    doc: null,
    selection: NO_SELECTION,
    measured: {},
    clipboard: null,

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
      const { positions, dragEnded, measured, selected, removed } = readNodeChanges(changes, get())
      if (measured) {
        const before = get().measured
        set({ measured })
        makeRoomFor(before, measured)
      }
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

    addAssetNode: async (asset, position) => {
      await get().loadPalette()
      const image = get().palette?.find(
        (item) => item.kind === 'builtin' && item.target === 'image',
      )
      const doc = editable()
      if (!image || !doc) return false
      const node = nodeFromPalette(
        doc.nodes,
        { ...image, name: asset.name },
        position ?? nextFreeSpot(doc.nodes),
      )
      const value = node.data.record.inputs?.find((input) => input.name === 'value')
      if (!value) return false
      // One undo step: the node arrives with its asset.
      get().editDoc((current) =>
        setInputValue(addNodes(current, [node]), node.id, value.id, asset.id),
      )
      set({ selection: { nodeIds: [node.id], edgeIds: [], groupIds: [] } })
      return true
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
      const { measured, nodeRuns } = get()
      // Nodes that show a result already are measured with it; the others get room for theirs.
      const showing = new Set(
        Object.entries(nodeRuns)
          .filter(([, run]) => run.outputs !== null && Object.keys(run.outputs).length > 0)
          .map(([id]) => id),
      )
      get().editDoc((doc) => moveNodes(doc, layout(doc.nodes, measured, showing)))
    },

    undo: () => {
      lastEdit = null
      history().getState().undo()
    },

    redo: () => {
      lastEdit = null
      history().getState().redo()
    },

    replaceDocument: (doc, rest) => {
      lastEdit = null
      setUntracked({ ...rest, doc, selection: NO_SELECTION, measured: {} })
      history().getState().clear()
    },
  }
}

/**
 * What React Flow's node changes ask for: moves (and whether a drag ended), new measures, the
 * node selection, removals. Measures and selection are null when no change touches them.
 */
function readNodeChanges(
  changes: readonly NodeChange<CanvasNode>[],
  state: Pick<AppState, 'measured' | 'selection'>,
) {
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
          measured ??= { ...state.measured }
          measured[change.id] = change.dimensions
        }
        break
      case 'select':
        selected ??= new Set(state.selection.nodeIds)
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
  return { positions, dragEnded, measured, selected, removed }
}

/** Where a node added without a drop point goes: right of everything, at the top. */
function nextFreeSpot(nodes: readonly CanvasNode[]): XYPosition {
  if (nodes.length === 0) return { x: 0, y: 0 }
  const right = Math.max(...nodes.map((node) => node.position.x + (node.width ?? 220)))
  const top = Math.min(...nodes.map((node) => node.position.y))
  return { x: right + 80, y: top }
}
