import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import sharp from 'sharp'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Evaluation } from '../../src-shared/api'
import type { EvaluationListInput, EvaluationRow } from '../../src-shared/domain/evaluations'
import {
  evaluationFeedbackSchema,
  evaluationListSchema,
  evaluationSubmitSchema,
} from '../../src-shared/domain/evaluations'
import { openDatabases, type Databases } from '../../src-main/db'
import { OutboxReplayer } from '../../src-main/outbox'
import { EvaluationReview, isEvaluationReviewError } from '../../src-main/review/evaluations'
import { seedHistory } from '../../src-main/sandbox/runs'
import { createServiceClient } from '../../src-main/service'
import { outputMedia, SyncEngine } from '../../src-main/sync'
import { startTestSandbox, type TestSandbox } from '../helpers/sandbox'

const PROFILE = 'test'
const scratch = mkdtempSync(join(tmpdir(), 'atelier-evaluations-review-'))
const dataDir = join(scratch, 'sandbox')
let sandbox: TestSandbox
let dbs: Databases
let orgId: string
/** Every evaluation the service holds, read over HTTP: what the filters are checked against. */
let all: Evaluation[]

/** Requests that left the client, as `METHOD /path`; storage PUTs included. */
const wire: string[] = []

function countingFetch(input: string | URL | Request, init?: RequestInit): Promise<Response> {
  const url = new URL(input instanceof Request ? input.url : input)
  wire.push(`${init?.method ?? 'GET'} ${url.pathname}`)
  return fetch(input, init)
}

function reviewFor(target: TestSandbox, options: { offline?: boolean } = {}): EvaluationReview {
  const client = createServiceClient({
    baseUrl: target.url,
    apiKey: target.keys.admin,
    organizationId: target.orgId,
    // One attempt: a closed sandbox is known to be unreachable at once.
    retry: { maxAttempts: 1 },
    fetch: countingFetch,
  })
  return new EvaluationReview({
    databases: dbs,
    client,
    profile: PROFILE,
    orgId,
    isOffline: () => options.offline ?? false,
    fetch: countingFetch,
  })
}

function list(review: EvaluationReview, input: EvaluationListInput) {
  return review.list(evaluationListSchema.parse(input))
}

/** Every row of a list, page by page, bounded. */
function everyRow(review: EvaluationReview, input: EvaluationListInput): EvaluationRow[] {
  const rows: EvaluationRow[] = []
  let cursor: string | null = null
  for (let page = 0; page < 200; page++) {
    const result = list(review, { ...input, cursor })
    rows.push(...result.items)
    cursor = result.next
    if (cursor === null) return rows
  }
  throw new Error('the list did not end within 200 pages')
}

async function serviceCopy(id: string): Promise<Evaluation> {
  const answer = await sandbox.call('GET', `/v1/evaluations/${id}`)
  expect(answer.status).toBe(200)
  return answer.body as Evaluation
}

async function expectCode(promise: Promise<unknown> | (() => unknown), code: string) {
  let caught: unknown = null
  try {
    await (typeof promise === 'function' ? promise() : promise)
  } catch (error) {
    caught = error
  }
  expect(isEvaluationReviewError(caught) ? caught.code : caught).toBe(code)
}

beforeAll(async () => {
  sandbox = await startTestSandbox({ dataDir, latencyMs: 0 })
  orgId = sandbox.orgId
  await seedHistory(sandbox.services, orgId, 400)
  dbs = openDatabases(join(scratch, 'home'))
  const client = createServiceClient({ baseUrl: sandbox.url, apiKey: sandbox.keys.admin })
  const synced = await new SyncEngine({
    client,
    mirror: dbs.mirror,
    profileName: PROFILE,
    orgId,
  }).syncAll({ collections: ['asset-folders', 'assets', 'runs', 'evaluations'] })
  expect(synced.state).toBe('ok')
  all = []
  for await (const e of client.list('/v1/evaluations', { params: { query: { limit: 500 } } })) {
    all.push(e)
  }
  expect(all.length).toBe(100)
}, 120_000)

afterAll(async () => {
  await sandbox.close()
  dbs.close()
  rmSync(scratch, { recursive: true, force: true })
})

describe('the evaluations list, from the mirror', () => {
  it('pages through every evaluation once, newest first', () => {
    const review = reviewFor(sandbox)
    const rows = everyRow(review, { limit: 7 })
    expect(rows.map((r) => r.id).sort()).toEqual(all.map((e) => e.id).sort())
    const times = rows.map((r) => Date.parse(r.createdAt))
    expect(times).toEqual([...times].sort((a, b) => b - a))
    const first = rows[0] as EvaluationRow
    const record = all.find((e) => e.id === first.id) as Evaluation
    expect(first).toMatchObject({
      status: record.status_code,
      score: record.weighted_pass_rate,
      attempt: record.attempt_number,
      superseded: record.superseded_at !== null,
      runId: record.run_id,
      pending: null,
    })
  })

  it('filters on verdict, status, feedback and the score range, as the service holds them', () => {
    const review = reviewFor(sandbox)
    const ids = (input: EvaluationListInput) =>
      everyRow(review, { limit: 25, ...input })
        .map((r) => r.id)
        .sort()
    const expected = (keep: (e: Evaluation) => boolean) =>
      all
        .filter(keep)
        .map((e) => e.id as string)
        .sort()
    const passed = expected((e) => e.overall_passed === true)
    expect(passed.length).toBeGreaterThan(0)
    expect(ids({ verdict: 'passed' })).toEqual(passed)
    expect(ids({ verdict: 'failed' })).toEqual(expected((e) => e.overall_passed === false))
    const failedStatus = expected((e) => e.status_code === 'failed')
    expect(failedStatus.length).toBeGreaterThan(0)
    expect(ids({ status: 'failed' })).toEqual(failedStatus)
    const rated = expected((e) => e.feedback_is_positive !== null)
    expect(rated.length).toBeGreaterThan(0)
    expect(ids({ feedback: 'given' })).toEqual(rated)
    expect(ids({ feedback: 'none' })).toEqual(expected((e) => e.feedback_is_positive === null))
    expect(ids({ feedback: 'up' })).toEqual(expected((e) => e.feedback_is_positive === true))
    expect(ids({ feedback: 'down' })).toEqual(expected((e) => e.feedback_is_positive === false))
    const middle = expected(
      (e) =>
        e.weighted_pass_rate !== null && e.weighted_pass_rate >= 0.4 && e.weighted_pass_rate <= 0.8,
    )
    expect(middle.length).toBeGreaterThan(0)
    expect(ids({ scoreMin: 0.4, scoreMax: 0.8 })).toEqual(middle)
    expect(ids({ verdict: 'passed', scoreMin: 0.4, scoreMax: 0.8 })).toEqual(
      middle.filter((id) => passed.includes(id)),
    )
  })

  it('searches words offline, with the same filters, and keeps cursors to their own list', () => {
    const review = reviewFor(sandbox)
    const about = all.filter((e) => e.generation_prompt?.toLowerCase().includes('lighthouse'))
    expect(about.length).toBeGreaterThan(0)
    const found = everyRow(review, { text: 'lighthouse', limit: 5 })
    expect(found.length).toBeGreaterThanOrEqual(about.length)
    for (const row of found) {
      const record = all.find((e) => e.id === row.id)
      expect(JSON.stringify(record).toLowerCase()).toContain('lighthouse')
    }
    const low = everyRow(review, { text: 'lighthouse', scoreMax: 0.5, limit: 5 })
    expect(low.length).toBeLessThan(found.length)
    expect(low.every((r) => r.score !== null && r.score <= 0.5)).toBe(true)
    expect(low.map((r) => r.id).sort()).toEqual(
      found
        .filter((r) => r.score !== null && r.score <= 0.5)
        .map((r) => r.id)
        .sort(),
    )

    const listed = list(review, { limit: 5 })
    expect(listed.mode).toBe('list')
    expect(() => list(review, { text: 'lighthouse', cursor: listed.next })).toThrow(
      expect.objectContaining({ code: 'EVALUATION_INVALID_CURSOR' }),
    )
    expect(() => list(review, { cursor: 'not-a-cursor' })).toThrow(
      expect.objectContaining({ code: 'EVALUATION_INVALID_CURSOR' }),
    )
  })
})

describe('one evaluation, from the mirror', () => {
  it('has its judges, issues, the picture of its run and the score', () => {
    const review = reviewFor(sandbox)
    const record = all.find(
      (e) => e.status_code === 'completed' && e.run_id !== null && (e.judges ?? []).length > 1,
    ) as Evaluation
    const detail = review.get({ id: record.id as string })
    expect(detail.row.verdict).toBe(record.overall_passed ? 'passed' : 'failed')
    expect(detail.row.score).toBe(record.weighted_pass_rate)
    expect(detail.judges.map((j) => [j.name, j.confidence, j.weight, j.passed])).toEqual(
      (record.judges ?? []).map((j) => [j.name, j.confidence, j.weight, j.passed]),
    )
    expect(detail.judges.flatMap((j) => j.issues.map((i) => i.code))).toEqual(
      (record.judges ?? []).flatMap((j) => (j.issues ?? []).map((i) => i.code)),
    )
    expect(detail.topIssues).toEqual(record.top_issues ?? [])
    expect(detail.topStrengths).toEqual(record.top_strengths ?? [])
    const run = dbs.mirror.runs.get(record.run_id as string)
    const output = outputMedia(run?.output).find((f) => f.sha256 !== null)
    expect(output?.sha256).toMatch(/^[0-9a-f]{64}$/)
    expect(detail.image).toMatchObject({ from: 'run', sha256: output?.sha256 })
  })

  it('shows the chain of attempts from either end, and only the newest may be re-evaluated', () => {
    const review = reviewFor(sandbox)
    const child = all.find((e) => (e.attempt_number ?? 1) > 1) as Evaluation
    expect(child).toBeDefined()
    const parentId = child.parent_evaluation_id as string
    const fromChild = review.get({ id: child.id as string })
    const chain = fromChild.attempts.map((a) => [a.attempt, a.current, a.superseded])
    expect(chain.length).toBe(child.attempt_number)
    expect(fromChild.attempts.at(-2)?.id).toBe(parentId)
    expect(chain.at(-1)).toEqual([child.attempt_number, true, child.superseded_at !== null])
    expect(fromChild.attempts.slice(0, -1).every((a) => a.superseded && !a.current)).toBe(true)

    const fromParent = review.get({ id: parentId })
    expect(fromParent.attempts.map((a) => a.id)).toEqual(fromChild.attempts.map((a) => a.id))
    expect(fromParent.attempts.find((a) => a.current)?.id).toBe(parentId)
    expect(fromParent.canReevaluate).toBe(false)
  })

  it('says plainly when the mirror does not hold it', async () => {
    const review = reviewFor(sandbox)
    await expectCode(
      () => review.get({ id: '00000000-0000-4000-8000-000000000000' }),
      'EVALUATION_NOT_FOUND',
    )
  })
})

describe('feedback through the outbox', () => {
  const target = () =>
    all.find((e) => e.status_code === 'completed' && e.feedback_is_positive === null) as Evaluation

  it('is sent at once when the service answers, and the mirror takes its answer', async () => {
    const review = reviewFor(sandbox)
    const id = target().id as string
    const detail = await review.feedback({ id, rating: 'down', reason: 'Hands look wrong' })
    expect(detail.pending).toBeNull()
    expect(detail.feedback).toEqual({ rating: 'down', reason: 'Hands look wrong' })
    expect(detail.row.rating).toBe('down')
    expect(await serviceCopy(id)).toMatchObject({
      feedback_is_positive: false,
      feedback_reason: 'Hands look wrong',
    })
  })

  it('stays pending while the sandbox is down, and is sent by the replay once it is back', async () => {
    const id = target().id as string
    await sandbox.close()
    const down = reviewFor(sandbox)
    const pending = await down.feedback({ id, rating: 'up', reason: 'Great light' })
    expect(pending.pending).toMatchObject({ rating: 'up', reason: 'Great light', state: 'pending' })
    // The mirror still holds the service's copy; the rating is shown over it.
    expect(pending.feedback.rating).toBe('down')
    const [row] = everyRow(down, { limit: 100 }).filter((r) => r.id === id)
    expect(row?.pending?.rating).toBe('up')

    // Known offline: not even tried.
    wire.length = 0
    const changed = await reviewFor(sandbox, { offline: true }).feedback({ id, rating: null })
    expect(wire).toEqual([])
    expect(changed.pending).toMatchObject({ rating: null, reason: null, state: 'pending' })

    sandbox = await startTestSandbox({ dataDir, latencyMs: 0 })
    const back = reviewFor(sandbox)
    expect(back.get({ id }).pending?.rating).toBeNull()
    // What the after-sync step does: replay the outbox, oldest first.
    const report = await new OutboxReplayer({
      client: createServiceClient({ baseUrl: sandbox.url, apiKey: sandbox.keys.admin }),
      ledger: dbs.ledger,
      mirror: dbs.mirror,
      profileName: PROFILE,
      orgId,
    }).replay()
    expect(report).toMatchObject({ state: 'ok', sent: 2, pending: 0 })
    const sent = back.get({ id })
    expect(sent.pending).toBeNull()
    expect(sent.feedback).toEqual({ rating: null, reason: null })
    expect(await serviceCopy(id)).toMatchObject({ feedback_is_positive: null })
  })

  it('refuses a reason without a rating, and a relative path, at the boundary', () => {
    const reasonOnly = evaluationFeedbackSchema.safeParse({ id: 'e1', rating: null, reason: 'x' })
    expect(reasonOnly.error?.issues.map((i) => i.path.join('.'))).toEqual(['reason'])
    const relative = evaluationSubmitSchema.safeParse({ image: { path: 'poster.png' } })
    expect(relative.success).toBe(false)
  })
})

describe('submitting an evaluation', () => {
  it('evaluates an asset of the organization, and refreshes it from the service', async () => {
    const review = reviewFor(sandbox)
    const asset = dbs.mirror.assets
      .list({ orgId, mediaType: 'image', limit: 50 })
      .items.find((a) => a.status_code === 'ready')
    expect(asset).toBeDefined()
    const submitted = await review.submit(
      evaluationSubmitSchema.parse({
        image: { assetId: asset?.id },
        jobClass: 'quick',
        prompt: 'a red bicycle',
      }),
    )
    expect(submitted.upload).toBeNull()
    const { evaluation } = submitted
    expect(evaluation.row).toMatchObject({ status: 'pending', jobClass: 'quick' })
    expect(evaluation.image).toMatchObject({
      from: 'asset',
      assetId: asset?.id,
      sha256: asset?.sha256,
    })
    expect(list(reviewFor(sandbox), { limit: 1 }).items[0]?.id).toBe(evaluation.id)

    let refreshed = evaluation
    for (let i = 0; i < 100 && refreshed.row.status !== 'completed'; i++) {
      await new Promise((resolve) => setTimeout(resolve, 50))
      refreshed = await review.refresh({ id: evaluation.id })
    }
    expect(refreshed.row.status).toBe('completed')
    expect(refreshed.row.score).not.toBeNull()
    expect(refreshed.judges.length).toBeGreaterThan(0)
    expect(dbs.mirror.evaluations.get(evaluation.id)?.status_code).toBe('completed')
    expect(refreshed.canReevaluate).toBe(true)

    // Evaluated again: the new one is attempt 2, and the first says it was superseded.
    const again = await review.submit(
      evaluationSubmitSchema.parse({ image: { assetId: asset?.id }, parentId: evaluation.id }),
    )
    expect(again.evaluation.row.attempt).toBe(2)
    expect(again.evaluation.attempts.map((a) => [a.id, a.current])).toEqual([
      [evaluation.id, false],
      [again.evaluation.id, true],
    ])
    const first = review.get({ id: evaluation.id })
    expect(first.row.superseded).toBe(true)
    expect(first.canReevaluate).toBe(false)
    expect(first.attempts.map((a) => a.id)).toEqual([evaluation.id, again.evaluation.id])
  })

  it('uploads a local image first, once, and refuses what is not an image', async () => {
    const review = reviewFor(sandbox)
    const path = join(scratch, 'poster.png')
    const png = await sharp({
      create: { width: 96, height: 64, channels: 3, background: { r: 200, g: 40, b: 90 } },
    })
      .png()
      .toBuffer()
    writeFileSync(path, png)
    wire.length = 0
    const first = await review.submit(evaluationSubmitSchema.parse({ image: { path } }))
    expect(first.upload?.how).toBe('uploaded')
    expect(wire.filter((w) => w.startsWith('PUT '))).toHaveLength(1)
    const asset = dbs.mirror.assets.get(first.upload?.assetId as string)
    expect(asset).toMatchObject({ name: expect.stringContaining('poster'), media_type: 'image' })
    expect(first.evaluation.image).toMatchObject({ from: 'asset', sha256: asset?.sha256 })

    wire.length = 0
    const again = await review.submit(evaluationSubmitSchema.parse({ image: { path } }))
    expect(again.upload).toEqual({ assetId: first.upload?.assetId, how: 'found' })
    expect(wire.filter((w) => w.startsWith('PUT ') || w.includes('asset-uploads'))).toEqual([])
    expect(again.evaluation.id).not.toBe(first.evaluation.id)

    const text = join(scratch, 'notes.png')
    writeFileSync(text, 'not a picture at all')
    await expectCode(
      review.submit(evaluationSubmitSchema.parse({ image: { path: text } })),
      'NOT_AN_IMAGE',
    )
    await expectCode(
      review.submit(evaluationSubmitSchema.parse({ image: { path: join(scratch, 'gone.png') } })),
      'FILE_NOT_READABLE',
    )
  })

  it('says OFFLINE when the service cannot be reached', async () => {
    const asset = dbs.mirror.assets.list({ orgId, mediaType: 'image', limit: 1 }).items[0]
    const closed = sandbox
    await closed.close()
    try {
      await expectCode(
        reviewFor(closed).submit(evaluationSubmitSchema.parse({ image: { assetId: asset?.id } })),
        'OFFLINE',
      )
    } finally {
      sandbox = await startTestSandbox({ dataDir, latencyMs: 0 })
    }
  })
})
