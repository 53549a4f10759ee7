import type { FlowCheck, PaletteItem } from '../../../src-shared/domain/flow-editor'
import { docToFlowFile, EMPTY_PROBLEMS, indexProblems, type ProblemIndex } from '../flows/document'
import { errorText } from '../shell/errorWords'
import { NOT_CONNECTED } from './flows'
import type { SliceWithApi } from './api'

export interface EditorCheckSlice {
  /** What can be put on the canvas; null until loaded. */
  palette: PaletteItem[] | null
  paletteProblem: string | null
  loadPalette: (again?: boolean) => Promise<void>
  /** The last check's answer: problems, the estimate and the balance. */
  check: FlowCheck | null
  /** The check's problems placed on nodes, inputs and flow ports. */
  problems: ProblemIndex
  checking: boolean
  /** Why the flow could not be checked (not why it is wrong: that is `problems`). */
  checkProblem: string | null
  /** Checks the document now; edits check it by themselves after a pause. */
  runCheck: () => Promise<void>
  /** Forgets the last check (another flow opened, or none). */
  resetChecks: () => void
}

/** How long the editor waits after the last edit before it checks the flow again. */
export const CHECK_MS = 400

export const createEditorCheckSlice: SliceWithApi<EditorCheckSlice> =
  (atelier) => (set, get, store) => {
    let timer: ReturnType<typeof setTimeout> | undefined
    let paletteLoading: Promise<void> | null = null
    /** Counts checks so that an answer to an older document never replaces a newer one. */
    let asked = 0

    const stopTimer = () => {
      if (timer !== undefined) clearTimeout(timer)
      timer = undefined
    }

    store.subscribe((state, previous) => {
      if (state.doc === previous.doc || state.doc === null) return
      stopTimer()
      timer = setTimeout(() => {
        timer = undefined
        void get().runCheck()
      }, CHECK_MS)
    })

    return {
      palette: null,
      paletteProblem: null,
      loadPalette: async (again = false) => {
        const api = atelier()
        if (!api) {
          set({ paletteProblem: NOT_CONNECTED })
          return
        }
        if (paletteLoading) return paletteLoading
        if (get().palette !== null && !again) return
        paletteLoading = (async () => {
          const result = await api.flows.palette()
          if (result.ok) set({ palette: result.value, paletteProblem: null })
          else set({ paletteProblem: errorText(result.error) })
        })()
        try {
          await paletteLoading
        } finally {
          paletteLoading = null
        }
      },

      check: null,
      problems: EMPTY_PROBLEMS,
      checking: false,
      checkProblem: null,
      runCheck: async () => {
        stopTimer()
        const api = atelier()
        const doc = get().doc
        if (!api || !doc) return
        const ask = ++asked
        set({ checking: true })
        const result = await api.flows.check({ flow: docToFlowFile(doc) })
        if (ask !== asked) return
        if (result.ok) {
          set({
            check: result.value,
            problems: indexProblems(result.value.problems, doc),
            checking: false,
            checkProblem: null,
          })
        } else {
          set({ checking: false, checkProblem: errorText(result.error) })
        }
      },
      resetChecks: () => {
        stopTimer()
        asked++
        set({ check: null, problems: EMPTY_PROBLEMS, checking: false, checkProblem: null })
        if (get().doc) {
          timer = setTimeout(() => {
            timer = undefined
            void get().runCheck()
          }, 0)
        }
      },
    }
  }
