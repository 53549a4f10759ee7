import type { Evaluation, EvaluationCreate } from '../../../src-shared/api'
import type { MirrorChange } from '../../../src-shared/ipc'
import type {
  EvaluationDetail,
  EvaluationListPage,
  EvaluationListQuery,
  EvaluationRow,
  EvaluationSubmit,
  PendingFeedback,
  Rating,
  SubmittedEvaluation,
} from '../../../src-shared/domain/evaluations'
import { searchQuerySchema } from '../../../src-shared/domain/search'
import type { Databases } from '../../db'
import { OutboxReplayer, type OutboxItem } from '../../outbox'
import { isSearchError, MirrorSearch } from '../../search'
import { isServiceError, type ServiceClient } from '../../service'
import { EvaluationReviewError, notInMirror, offline } from './errors'
import { EvaluationPages } from './present'
import {
  decodeListCursor,
  encodeListCursor,
  EvaluationRows,
  type ListCursor,
  type PendingOf,
} from './rows'
import { uploadImage } from './upload'

export interface EvaluationReviewOptions {
  databases: Databases
  client: ServiceClient
  /** The outbox keeps writes per profile and organization. */
  profile: string
  orgId: string
  /**
   * True while the sync finds the service unreachable: feedback then waits in the outbox at
   * once, and a refresh answers from the mirror, instead of waiting out the client's retries.
   */
  isOffline?: () => boolean
  /** How long feedback waits for the service before it is left pending for the next replay. */
  sendTimeoutMs?: number
  /** For the upload's storage PUTs (a test counts them). */
  fetch?: typeof fetch
  /** Told after a submission went into the mirror, for the lists to read it again. */
  onWritten?: (collections: readonly MirrorChange[]) => void
  /** Told after a submission, which holds credit. */
  onBalanceChange?: () => void
}

/** Search pages read to fill one list page when a filter only rows can check drops results. */
const RANKED_PAGES_PER_CALL = 5
const SEND_TIMEOUT_MS = 8_000

/** Embedded by GET /v1/evaluations/{id} only; the mirror keeps what the list gives. */
function withoutEmbedded(evaluation: Evaluation): Evaluation {
  const { run: _run, model: _model, parent_evaluation: _parent, ...record } = evaluation
  return record
}

const ratingOf = (isPositive: boolean | null): Rating | null =>
  isPositive === null ? null : isPositive ? 'up' : 'down'

/**
 * The Evaluations section's main-process side: reads from the mirror (offline, a page at a
 * time), feedback through the outbox, submissions and refreshes through the service client.
 */
export class EvaluationReview {
  private readonly rows: EvaluationRows
  private readonly pages: EvaluationPages
  private readonly search: MirrorSearch
  private readonly replayer: OutboxReplayer
  private readonly closing = new AbortController()
  private readonly pendingOf: PendingOf

  constructor(private readonly options: EvaluationReviewOptions) {
    const { databases, client, profile, orgId } = options
    this.rows = new EvaluationRows(databases.mirror)
    this.pages = new EvaluationPages(databases.mirror, orgId)
    this.search = new MirrorSearch(databases.mirror)
    this.replayer = new OutboxReplayer({
      client,
      ledger: databases.ledger,
      mirror: databases.mirror,
      profileName: profile,
      orgId,
    })
    this.pendingOf = (id) => this.pendingFeedback(id)
  }

  list(query: EvaluationListQuery): EvaluationListPage {
    const cursor = query.cursor ? decodeListCursor(query.cursor) : null
    if (query.text.trim() === '') {
      if (cursor?.mode === 'ranked') throw wrongCursor()
      const page = this.rows.page(this.options.orgId, query, cursor?.after ?? null, this.pendingOf)
      return {
        mode: 'list',
        items: page.items,
        next: page.next ? encodeListCursor({ mode: 'list', after: page.next }) : null,
      }
    }
    if (cursor?.mode === 'list') throw wrongCursor()
    return this.ranked(query, cursor)
  }

  /**
   * Words go through the offline search (prompts, notes, judges, issues), which filters on
   * status, verdict and a given rating itself; the score range and "any rating" are checked
   * on the rows it finds, reading a few more of its pages when they drop some.
   */
  private ranked(
    query: EvaluationListQuery,
    cursor: Extract<ListCursor, { mode: 'ranked' }> | null,
  ): EvaluationListPage {
    const items: EvaluationRow[] = []
    let next: string | null = cursor?.next ?? null
    const feedback =
      query.feedback === 'up'
        ? 'positive'
        : query.feedback === 'down'
          ? 'negative'
          : query.feedback === 'none'
            ? 'none'
            : undefined
    for (let read = 0; read < RANKED_PAGES_PER_CALL; read++) {
      const result = this.searchPage({
        text: query.text,
        kind: 'evaluations',
        ...(query.status ? { status: query.status } : {}),
        ...(query.verdict ? { verdict: query.verdict } : {}),
        ...(feedback ? { feedback } : {}),
        limit: Math.min(100, query.limit - items.length),
        cursor: next,
      })
      const ids = result.items.map((item) => item.id)
      const found = this.rows.byId(ids, this.pendingOf)
      for (const id of ids) {
        const row = found.get(id)
        if (row && keeps(row, query)) items.push(row)
      }
      next = result.next
      if (next === null || items.length >= query.limit) break
    }
    return {
      mode: 'ranked',
      items,
      next: next === null ? null : encodeListCursor({ mode: 'ranked', next }),
    }
  }

  private searchPage(input: unknown) {
    try {
      return this.search.searchChecked(
        { orgId: this.options.orgId },
        searchQuerySchema.parse(input),
      )
    } catch (error) {
      if (isSearchError(error) && error.code === 'SEARCH_INVALID_CURSOR') throw wrongCursor()
      throw error
    }
  }

  get({ id }: { id: string }): EvaluationDetail {
    const record = this.options.databases.mirror.evaluations.get(id)
    const row = this.rows.byId([id], this.pendingOf).get(id)
    if (!record || !row) throw notInMirror(id)
    return { ...this.pages.detail(record, row), pending: row.pending }
  }

  /** The service's copy into the mirror, then the page; offline, the mirror's copy as it is. */
  async refresh({ id }: { id: string }): Promise<EvaluationDetail> {
    if (!this.isOffline()) {
      try {
        await this.fetchIntoMirror(id)
      } catch (error) {
        // Unreachable: the mirror's copy is the answer, as anywhere offline.
        if (!isServiceError(error) || error.status !== 0) throw error
      }
    }
    return this.get({ id })
  }

  /**
   * A rating (null clears it) goes into the outbox first, so it is never lost. Then, unless the
   * service is known to be unreachable, the outbox is replayed at once, for a short while: sent,
   * the mirror holds the service's answer; not sent, it stays pending and the replay after the
   * next sync sends it. A new rating replaces one the service refused: that one is dropped.
   */
  async feedback(input: {
    id: string
    rating: Rating | null
    reason?: string | null | undefined
  }): Promise<EvaluationDetail> {
    const { id, rating } = input
    if (!this.options.databases.mirror.evaluations.get(id)) throw notInMirror(id)
    for (const item of this.feedbackItems(id)) {
      if (item.state === 'rejected') this.replayer.discard(item.seq)
    }
    this.replayer.giveFeedback(id, {
      isPositive: rating === null ? null : rating === 'up',
      comment: rating === null ? null : (input.reason ?? null),
    })
    if (!this.isOffline()) {
      const signal = AbortSignal.any([
        this.closing.signal,
        AbortSignal.timeout(this.options.sendTimeoutMs ?? SEND_TIMEOUT_MS),
      ])
      await this.replayer.replay({ signal })
    }
    return this.get({ id })
  }

  /**
   * Submits an asset, or a local image uploaded first (found by its content when the
   * organization already has it). There is no offline submission: the outbox has no kind for
   * it, and an evaluation costs credit, which only the service can check; so OFFLINE.
   */
  async submit(input: EvaluationSubmit): Promise<SubmittedEvaluation> {
    const { client, databases, orgId } = this.options
    const signal = this.closing.signal
    let assetId: string
    let upload: SubmittedEvaluation['upload'] = null
    if ('path' in input.image) {
      const uploaded = await uploadImage(client, input.image.path, {
        signal,
        ...(this.options.fetch ? { fetch: this.options.fetch } : {}),
      })
      databases.mirror.assets.upsertPage([uploaded.asset])
      assetId = uploaded.asset.id
      upload = { assetId, how: uploaded.how }
    } else {
      assetId = input.image.assetId
    }
    const body: EvaluationCreate = {
      asset_id: assetId,
      job_class_code: input.jobClass,
      ...(input.prompt ? { generation_prompt: input.prompt } : {}),
      ...(input.taskType ? { task_type: input.taskType } : {}),
      ...(input.taskDescription ? { task_description: input.taskDescription } : {}),
      ...(input.instructions ? { evaluation_instructions: input.instructions } : {}),
      ...(input.parentId ? { parent_evaluation_id: input.parentId } : {}),
    }
    let created: Evaluation
    try {
      created = await client.post('/v1/evaluations', { body, signal })
    } catch (error) {
      if (isServiceError(error) && error.status === 0 && error.code !== 'ABORTED') {
        throw offline('the evaluation was not submitted')
      }
      throw error
    }
    const id = created.id
    if (!id) {
      throw new EvaluationReviewError(
        'EVALUATION_NOT_FOUND',
        'The service accepted the evaluation but gave it no id; sync to find it in the list.',
      )
    }
    databases.mirror.evaluations.upsertPage([withoutEmbedded(created)], { orgId })
    if (input.parentId) {
      // The parent is superseded now; its copy says so once read again (or at the next sync).
      await this.fetchIntoMirror(input.parentId).catch(() => undefined)
    }
    this.options.onWritten?.(
      upload?.how === 'uploaded' ? ['evaluations', 'assets'] : ['evaluations'],
    )
    this.options.onBalanceChange?.()
    return { evaluation: this.get({ id }), upload }
  }

  /** Stops what is under way (a replay, an upload); the outbox keeps what was not sent. */
  close(): void {
    this.closing.abort()
  }

  private async fetchIntoMirror(id: string): Promise<void> {
    const fresh = await this.options.client.get('/v1/evaluations/{evaluation_id}', {
      params: { path: { evaluation_id: id } },
      signal: this.closing.signal,
    })
    this.options.databases.mirror.evaluations.upsertPage([withoutEmbedded(fresh)], {
      orgId: this.options.orgId,
    })
  }

  private isOffline(): boolean {
    return this.options.isOffline?.() ?? false
  }

  private feedbackItems(id: string): OutboxItem[] {
    return this.replayer.pendingFor(id).filter((item) => item.kind === 'evaluation.feedback')
  }

  /** The newest waiting rating, else the newest refused one: what the page shows over the mirror. */
  private pendingFeedback(id: string): PendingFeedback | null {
    const items = this.feedbackItems(id)
    const item = items.findLast((i) => i.state === 'pending') ?? items.at(-1)
    if (!item || item.write?.kind !== 'evaluation.feedback') return null
    return {
      seq: item.seq,
      rating: ratingOf(item.write.isPositive),
      reason: item.write.reason,
      state: item.state === 'rejected' ? 'rejected' : 'pending',
      error: item.lastError,
    }
  }
}

function keeps(row: EvaluationRow, query: EvaluationListQuery): boolean {
  if (query.feedback === 'given' && row.rating === null) return false
  if (query.scoreMin !== undefined && (row.score === null || row.score < query.scoreMin)) {
    return false
  }
  if (query.scoreMax !== undefined && (row.score === null || row.score > query.scoreMax)) {
    return false
  }
  return true
}

function wrongCursor(): EvaluationReviewError {
  return new EvaluationReviewError(
    'EVALUATION_INVALID_CURSOR',
    'The cursor belongs to another list (the words changed); leave it out to start from the first page.',
  )
}
