import type { EvaluationStatusCode } from '../../../src-shared/api'
import type {
  EvaluationDetail,
  EvaluationRow,
  EvaluationSubmitInput,
  FeedbackFilter,
  Rating,
  SubmittedEvaluation,
  Verdict,
} from '../../../src-shared/domain/evaluations'
import type { AtelierApi } from '../../../src-shared/ipc/api'
import { explainError, type PlainError } from '../shell/errorWords'
import type { SliceWithApi } from './api'

/** What the filter bar sets; the list asks for exactly this. */
export interface EvaluationFilters {
  text: string
  verdict: Verdict | null
  status: EvaluationStatusCode | null
  feedback: FeedbackFilter | null
  /** 0–1 bounds of the score; null: no bound. */
  scoreMin: number | null
  scoreMax: number | null
}

export const NO_EVALUATION_FILTERS: EvaluationFilters = {
  text: '',
  verdict: null,
  status: null,
  feedback: null,
  scoreMin: null,
  scoreMax: null,
}

/** A page fills a tall window with rows to spare; scrolling asks for the next one early. */
export const EVALUATION_PAGE_SIZE = 60

const NOT_CONNECTED: PlainError = explainError({
  code: 'UNAVAILABLE',
  message: 'This page is not connected to Atelier, so evaluations cannot be shown here.',
})

export interface EvaluationsSlice {
  evaluationFilters: EvaluationFilters
  /** Rows loaded so far; null before the first page came. */
  evaluationRows: EvaluationRow[] | null
  evaluationsNext: string | null
  evaluationsLoading: 'first' | 'more' | null
  evaluationsProblem: PlainError | null
  /** The evaluation whose page is open; null shows the list. */
  openEvaluationId: string | null
  evaluation: EvaluationDetail | null
  evaluationProblem: PlainError | null
  /** A rating on its way to the main process (it may then wait in the outbox). */
  feedbackSending: boolean
  feedbackProblem: PlainError | null
  submitOpen: boolean
  setEvaluationFilters: (patch: Partial<EvaluationFilters>) => Promise<void>
  clearEvaluationFilters: () => Promise<void>
  loadEvaluations: () => Promise<void>
  loadMoreEvaluations: () => Promise<void>
  /** Opens an evaluation's page: the mirror's copy at once, then the service's if it answers. */
  openEvaluation: (id: string) => Promise<void>
  closeEvaluation: () => void
  /** Reads the open evaluation again: from the service when `fromService`, else the mirror. */
  reloadEvaluation: (fromService: boolean) => Promise<void>
  giveFeedback: (rating: Rating | null, reason?: string) => Promise<boolean>
  setSubmitOpen: (open: boolean) => void
  submitEvaluation: (input: EvaluationSubmitInput) => Promise<SubmittedEvaluation | PlainError>
}

export const createEvaluationsSlice: SliceWithApi<EvaluationsSlice> = (atelier) => (set, get) => {
  // Answers to an older question (filters changed, another evaluation opened) are dropped.
  let listAsked = 0
  let pageAsked = 0
  /**
   * The bridge whose `mirror.changed` is heard, from the first list on: an evaluation the app
   * submitted shows in the list at once, wherever it was submitted from.
   */
  let heard: AtelierApi | null = null
  const hear = (api: AtelierApi) => {
    if (heard === api) return
    heard = api
    api.on('mirror.changed', ({ collections }) => {
      if (!collections.includes('evaluations')) return
      if (get().evaluationRows !== null) void get().loadEvaluations()
      // A rating the outbox just sent: the open page drops its "pending" mark at once.
      if (get().openEvaluationId !== null) void get().reloadEvaluation(false)
    })
  }

  const queryOf = (filters: EvaluationFilters, cursor: string | null) => ({
    text: filters.text.trim(),
    ...(filters.verdict ? { verdict: filters.verdict } : {}),
    ...(filters.status ? { status: filters.status } : {}),
    ...(filters.feedback ? { feedback: filters.feedback } : {}),
    ...(filters.scoreMin === null ? {} : { scoreMin: filters.scoreMin }),
    ...(filters.scoreMax === null ? {} : { scoreMax: filters.scoreMax }),
    limit: EVALUATION_PAGE_SIZE,
    cursor,
  })

  /** The list's copy of a row the page just changed (a rating), so Back shows it too. */
  const rememberRow = (detail: EvaluationDetail) => {
    const rows = get().evaluationRows
    if (!rows?.some((row) => row.id === detail.id)) return
    set({ evaluationRows: rows.map((row) => (row.id === detail.id ? detail.row : row)) })
  }

  const readPage = async (id: string, fromService: boolean) => {
    const api = atelier()
    if (!api) {
      set({ evaluationProblem: NOT_CONNECTED })
      return
    }
    hear(api)
    const asked = ++pageAsked
    const result = fromService
      ? await api.evaluations.refresh({ id })
      : await api.evaluations.get({ id })
    if (asked !== pageAsked || get().openEvaluationId !== id) return
    if (result.ok) {
      set({ evaluation: result.value, evaluationProblem: null })
      rememberRow(result.value)
    } else if (!fromService || get().evaluation === null) {
      // A failed refresh leaves the mirror's copy on screen: it is still the best answer.
      set({ evaluationProblem: explainError(result.error) })
    }
  }

  return {
    evaluationFilters: NO_EVALUATION_FILTERS,
    evaluationRows: null,
    evaluationsNext: null,
    evaluationsLoading: null,
    evaluationsProblem: null,
    openEvaluationId: null,
    evaluation: null,
    evaluationProblem: null,
    feedbackSending: false,
    feedbackProblem: null,
    submitOpen: false,
    setEvaluationFilters: async (patch) => {
      set({ evaluationFilters: { ...get().evaluationFilters, ...patch } })
      await get().loadEvaluations()
    },
    clearEvaluationFilters: async () => {
      set({ evaluationFilters: NO_EVALUATION_FILTERS })
      await get().loadEvaluations()
    },
    loadEvaluations: async () => {
      const api = atelier()
      if (!api) {
        set({ evaluationsProblem: NOT_CONNECTED })
        return
      }
      hear(api)
      const asked = ++listAsked
      set({ evaluationsLoading: 'first' })
      const result = await api.evaluations.list(queryOf(get().evaluationFilters, null))
      if (asked !== listAsked) return
      if (result.ok) {
        set({
          evaluationRows: result.value.items,
          evaluationsNext: result.value.next,
          evaluationsProblem: null,
          evaluationsLoading: null,
        })
      } else {
        set({ evaluationsProblem: explainError(result.error), evaluationsLoading: null })
      }
    },
    loadMoreEvaluations: async () => {
      const api = atelier()
      const { evaluationsNext: cursor, evaluationsLoading, evaluationFilters } = get()
      if (!api || cursor === null || evaluationsLoading !== null) return
      const asked = listAsked
      set({ evaluationsLoading: 'more' })
      const result = await api.evaluations.list(queryOf(evaluationFilters, cursor))
      if (asked !== listAsked) return
      if (result.ok) {
        const known = new Set((get().evaluationRows ?? []).map((row) => row.id))
        set({
          evaluationRows: [
            ...(get().evaluationRows ?? []),
            ...result.value.items.filter((row) => !known.has(row.id)),
          ],
          evaluationsNext: result.value.next,
          evaluationsLoading: null,
        })
      } else {
        set({ evaluationsProblem: explainError(result.error), evaluationsLoading: null })
      }
    },
    openEvaluation: async (id) => {
      set({
        openEvaluationId: id,
        evaluation: get().evaluation?.id === id ? get().evaluation : null,
        evaluationProblem: null,
        feedbackProblem: null,
      })
      await readPage(id, false)
      // The service's newer copy, if it answers; offline the mirror's stays.
      if (get().sync?.state !== 'offline') await readPage(id, true)
    },
    closeEvaluation: () => {
      pageAsked++
      set({ openEvaluationId: null, evaluation: null, evaluationProblem: null })
    },
    reloadEvaluation: async (fromService) => {
      const id = get().openEvaluationId
      if (id !== null) await readPage(id, fromService)
    },
    giveFeedback: async (rating, reason) => {
      const api = atelier()
      const id = get().openEvaluationId
      if (!api || id === null) return false
      set({ feedbackSending: true, feedbackProblem: null })
      const result = await api.evaluations.feedback({
        id,
        rating,
        ...(rating !== null && reason?.trim() ? { reason: reason.trim() } : {}),
      })
      set({ feedbackSending: false })
      if (!result.ok) {
        set({ feedbackProblem: explainError(result.error) })
        return false
      }
      if (get().openEvaluationId === id) set({ evaluation: result.value })
      rememberRow(result.value)
      return true
    },
    setSubmitOpen: (open) => {
      set({ submitOpen: open })
    },
    submitEvaluation: async (input) => {
      const api = atelier()
      if (!api) return NOT_CONNECTED
      const result = await api.evaluations.submit(input)
      if (!result.ok) return explainError(result.error)
      set({ submitOpen: false })
      void get().loadEvaluations()
      set({
        openEvaluationId: result.value.evaluation.id,
        evaluation: result.value.evaluation,
        evaluationProblem: null,
      })
      return result.value
    },
  }
}
