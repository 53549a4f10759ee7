import type { TemporalState, ZundoOptions } from 'zundo'
import type { StoreApi } from 'zustand'
import type { EditorDoc } from '../flows/document'
import type { AppState } from './index'

/** What undo and redo restore: the document, and nothing else (not the selection, not a run). */
export interface EditorHistory {
  doc: EditorDoc | null
}

/** Undo and redo cover the document only; other state changes leave the history alone. */
export const EDITOR_HISTORY: ZundoOptions<AppState, EditorHistory> = {
  partialize: (state) => ({ doc: state.doc }),
  equality: (past, current) => past.doc === current.doc,
  limit: 200,
}

type HistoryStore = StoreApi<TemporalState<EditorHistory>>

/**
 * The store's undo history, and a way to change the document without an undo step (loading a
 * flow, a rename made by the main process, a keystroke merged into the one before).
 */
export function editorHistory(
  set: (partial: Partial<AppState>) => void,
  store: StoreApi<AppState>,
) {
  /** zundo puts its own store on the app store as `temporal`; the mutator types leave it unknown. */
  const history = (): HistoryStore => (store as unknown as { temporal: HistoryStore }).temporal

  const setUntracked = (partial: Partial<AppState>) => {
    const temporal = history().getState()
    temporal.pause()
    set(partial)
    temporal.resume()
  }

  return { history, setUntracked }
}
