import type { StoreApi } from 'zustand'
import { docToFlowFile, type EditorDoc } from '../flows/document'
import { errorText } from '../shell/errorWords'
import type { ApiSource } from './api'
import { NOT_CONNECTED } from './flows'
import type { AppState } from './index'

/** How long the editor waits after the last edit before it saves. */
export const AUTOSAVE_MS = 800

const CONFLICT_WORDS =
  'This flow was changed somewhere else (another window or the command line) after you opened it, so your latest edits are not saved. Reload it to get the other version (your unsaved edits are dropped), or save your version as a copy.'

/**
 * Saves the open flow a moment after each edit, one save at a time, and keeps `saveStatus` and
 * `saveProblem` telling how it went. Starts listening to the document when made.
 */
export function createAutosave(
  api: ApiSource,
  set: (partial: Partial<AppState>) => void,
  get: () => AppState,
  store: StoreApi<AppState>,
) {
  /** The document last saved (or loaded): the autosave skips it, an undo back to it included. */
  let savedDoc: EditorDoc | null = null
  let saveTimer: ReturnType<typeof setTimeout> | undefined
  let saving: Promise<void> | null = null

  const stop = () => {
    if (saveTimer !== undefined) clearTimeout(saveTimer)
    saveTimer = undefined
  }

  const schedule = () => {
    stop()
    saveTimer = setTimeout(() => {
      saveTimer = undefined
      void saveNow()
    }, AUTOSAVE_MS)
  }

  const saveNow = async (): Promise<void> => {
    stop()
    if (saving) {
      await saving
      // The edits made while that save ran are saved now, or scheduled by then.
      if (saveTimer !== undefined) await saveNow()
      return
    }
    const { editor, doc, saveStatus } = get()
    const atelier = api()
    if (!editor || !doc || editor.readOnly || saveStatus === 'conflict') return
    if (doc === savedDoc) {
      set({ saveStatus: 'saved', saveProblem: null })
      return
    }
    if (!atelier) {
      set({ saveStatus: 'failed', saveProblem: NOT_CONNECTED })
      return
    }
    set({ saveStatus: 'saving' })
    saving = (async () => {
      const result = await atelier.flows
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
        if (newer) schedule()
      } else if (result.error.code === 'CONFLICT') {
        stop()
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
      stop()
      if (!saving) set({ saveStatus: 'saved', saveProblem: null })
      return
    }
    // Set only when it changes: a drag changes the document at every move, and each set wakes
    // every subscriber of the store.
    if (state.saveStatus !== 'saving' && state.saveStatus !== 'pending') {
      set({ saveStatus: 'pending' })
    }
    schedule()
  }

  store.subscribe((state, previous) => {
    if (state.doc !== previous.doc) onDocChanged(state)
  })

  return {
    /** Saves now what waits; resolves once it is saved (or could not be). */
    saveNow,
    /** Drops the save that waits (a reload, a copy or a close takes over). */
    stop,
    /** The document now saved as it is (just loaded, or none): nothing of it waits. */
    savedAs: (doc: EditorDoc | null) => {
      savedDoc = doc
    },
    /** The main process renamed the file: the renamed document is what is saved, if `from` was. */
    renamed: (from: EditorDoc, to: EditorDoc) => {
      if (savedDoc === from) savedDoc = to
    },
  }
}
