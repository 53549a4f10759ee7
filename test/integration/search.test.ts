import { spawnSync } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { components, Evaluation, Run, RunLog } from '../../src-shared/api'
import type {
  SearchQueryInput,
  SearchResult,
  SearchResultItem,
} from '../../src-shared/domain/search'
import { runCli } from '../../src-main/cli/program'
import { openDatabases, type Databases } from '../../src-main/db'
import { seedHistory } from '../../src-main/sandbox/runs'

/** mulberry32: a small seeded generator, enough for a reproducible test history. */
function seededRandom(seed: number): () => number {
  let state = seed >>> 0
  return () => {
    state = (state + 0x6d2b79f5) >>> 0
    let t = state
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}
import { isSearchError, MirrorSearch, syncedOrganizations } from '../../src-main/search'
import { createServiceClient, type ServiceClient } from '../../src-main/service'
import { SyncEngine } from '../../src-main/sync'
import { startTestSandbox, type TestSandbox } from '../helpers/sandbox'

type Asset = components['schemas']['Asset']
type AssetFolder = components['schemas']['AssetFolder']
type Model = components['schemas']['Model']

const root = join(import.meta.dirname, '..', '..')
const PROFILE = 'test'
const DAY = 24 * 60 * 60 * 1000

let sandbox: TestSandbox
let client: ServiceClient
let home: string
let dbs: Databases
let search: MirrorSearch
let orgId: string

// What the service holds, read over HTTP: the expectations every search is checked against.
let runs: Run[]
let evaluations: Evaluation[]
let assets: Asset[]
let folders: AssetFolder[]
let models: Model[]
/** The runs dispatched here, with words nothing else in the sandbox uses. */
const dispatched: Record<'juggler' | 'portrait' | 'lighthouse', Run> = {} as never
let wombatEvaluation: Evaluation
let tangerineAsset: Asset
let wombatFolder: AssetFolder
const mirroredLogs: RunLog[] = []

async function all<T>(
  path: '/v1/runs' | '/v1/evaluations' | '/v1/assets' | '/v1/asset-folders' | '/v1/models',
) {
  const items: T[] = []
  for await (const item of client.list(path, { params: { query: { limit: 500 } } })) {
    items.push(item as T)
    if (items.length > 20_000) throw new Error(`${path} does not end`)
  }
  return items
}

async function until<T>(what: string, read: () => Promise<T>, done: (value: T) => boolean) {
  const deadline = Date.now() + 20_000
  for (let attempt = 0; attempt < 400; attempt++) {
    const value = await read()
    if (done(value)) return value
    if (Date.now() > deadline) break
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
  throw new Error(`${what} did not finish in time`)
}

async function dispatch(slug: string, input: Record<string, unknown>): Promise<Run> {
  const [provider = '', model = ''] = slug.split('/')
  const created = await client.post('/v1/models/{provider}/{model}/runs', {
    params: { path: { provider, model } },
    body: { input },
  })
  return until(
    `run ${created.id}`,
    () => client.get('/v1/runs/{run_id}', { params: { path: { run_id: created.id } } }),
    (run) => ['succeeded', 'failed', 'canceled'].includes(run.status_code),
  )
}

function find(input: SearchQueryInput): SearchResult {
  return search.search({ orgId }, input)
}

/** Every page of a search, through its cursors; fails on a repeated record. */
function findAll(input: SearchQueryInput): SearchResultItem[] {
  const items: SearchResultItem[] = []
  let cursor: string | null = null
  for (let page = 0; page < 500; page++) {
    const result = find({ ...input, cursor })
    items.push(...result.items)
    cursor = result.next
    if (cursor === null) break
  }
  expect(cursor).toBeNull()
  const keys = items.map((item) => `${item.kind}:${item.id}`)
  expect(new Set(keys).size).toBe(keys.length)
  return items
}

const ids = (items: readonly { id: string | null }[]) => items.map((item) => item.id).sort()
const idsOf = (items: readonly SearchResultItem[], kind: SearchResultItem['kind']) =>
  items
    .filter((item) => item.kind === kind)
    .map((item) => item.id)
    .sort()

/** The highlighted words of a snippet, folded. */
const highlighted = (item: SearchResultItem | undefined) =>
  (item?.snippet?.highlights ?? []).map(([start, end]) =>
    (item?.snippet?.text ?? '').slice(start, end).toLowerCase(),
  )

const words = (text: string | null | undefined) =>
  new Set((text ?? '').toLowerCase().match(/\p{L}+/gu) ?? [])

function invalid(input: unknown): string {
  try {
    search.search({ orgId }, input)
  } catch (error) {
    if (isSearchError(error)) return error.code
    throw error
  }
  return 'accepted'
}

beforeAll(async () => {
  // A fixed seed: the seeded history is the same every run, so it always holds the kinds the
  // filters are checked on (a video asset, every verdict and feedback), not only most runs.
  sandbox = await startTestSandbox({ latencyMs: 0, random: seededRandom(20261121) })
  orgId = sandbox.orgId
  client = createServiceClient({ baseUrl: sandbox.url, apiKey: sandbox.keys.admin })
  await seedHistory(sandbox.services, orgId, 240)

  dispatched.juggler = await dispatch('atelier/text-to-image', {
    prompt: 'a quokka juggling tangerines at dusk',
    width: 128,
    height: 128,
    seed: 1,
  })
  dispatched.portrait = await dispatch('atelier/text-to-image', {
    prompt: 'quokka portrait in gouache',
    negative_prompt: 'marmalade smears',
    width: 128,
    height: 128,
    seed: 2,
  })
  dispatched.lighthouse = await dispatch('atelier/text-to-image', {
    prompt: 'lighthouse on a cliff',
    width: 128,
    height: 128,
    seed: 3,
  })

  const seededAssets = await all<Asset>('/v1/assets')
  const images = seededAssets.filter((a) => a.media_type === 'image')
  const [evaluated, moved] = images
  if (!evaluated || !moved) throw new Error('the history has too few images')
  const submitted = await client.post('/v1/evaluations', {
    body: { asset_id: evaluated.id, generation_prompt: 'zine cover with a wombat' },
  })
  const evaluationId = submitted.id ?? ''
  const finished = await until(
    `evaluation ${evaluationId}`,
    () =>
      client.get('/v1/evaluations/{evaluation_id}', {
        params: { path: { evaluation_id: evaluationId } },
      }),
    (e) => e.status_code === 'completed' || e.status_code === 'failed',
  )
  expect(finished.status_code).toBe('completed')
  await client.patch('/v1/evaluations/{evaluation_id}/feedback', {
    params: { path: { evaluation_id: evaluationId } },
    body: { is_positive: true },
  })
  const seededEvaluations = await all<Evaluation>('/v1/evaluations')
  const disliked = seededEvaluations.find(
    (e) =>
      e.id !== evaluationId && e.status_code === 'completed' && e.feedback_is_positive === null,
  )
  if (!disliked?.id) throw new Error('no completed evaluation in the history')
  await client.patch('/v1/evaluations/{evaluation_id}/feedback', {
    params: { path: { evaluation_id: disliked.id } },
    body: { is_positive: false },
  })

  wombatFolder = await client.post('/v1/asset-folders', { body: { name: 'Wombat references' } })
  tangerineAsset = await client.patch('/v1/assets/{asset_id}', {
    params: { path: { asset_id: moved.id } },
    body: { name: 'tangerine study.png', folder_id: wombatFolder.id },
  })

  home = mkdtempSync(join(tmpdir(), 'atelier-search-'))
  dbs = openDatabases(home)
  const synced = await new SyncEngine({
    client,
    mirror: dbs.mirror,
    profileName: PROFILE,
    orgId,
  }).syncAll()
  expect(synced.state).toBe('ok')
  // The sync engine does not bring logs in (yet): they are written the way it would, from the
  // service's own answers, for the runs dispatched here.
  for (const run of Object.values(dispatched)) {
    for await (const log of client.list('/v1/runs/{run_id}/logs', {
      params: { path: { run_id: run.id }, query: { limit: 500 } },
    })) {
      mirroredLogs.push(log)
    }
  }
  dbs.mirror.runLogs.upsertPage(mirroredLogs)
  search = new MirrorSearch(dbs.mirror)

  runs = await all<Run>('/v1/runs')
  evaluations = await all<Evaluation>('/v1/evaluations')
  assets = await all<Asset>('/v1/assets')
  folders = await all<AssetFolder>('/v1/asset-folders')
  models = await all<Model>('/v1/models')
  wombatEvaluation = evaluations.find((e) => e.id === evaluationId) as Evaluation
}, 120_000)

afterAll(async () => {
  dbs.close()
  await sandbox.close()
  rmSync(home, { recursive: true, force: true })
})

describe('ranked search', () => {
  it('finds runs by their prompt, each run once, with the match highlighted', () => {
    const result = find({ text: 'quokka', kind: 'runs' })
    expect(result.mode).toBe('ranked')
    // Their logs repeat the prompt: still one result per run.
    expect(ids(result.items)).toEqual(ids([dispatched.juggler, dispatched.portrait]))
    for (const item of result.items) {
      expect(item.matchedIn).toBe('prompt')
      expect(highlighted(item)).toContain('quokka')
      expect(item.score).toBeGreaterThan(0)
    }
    expect(result.items.find((i) => i.id === dispatched.juggler.id)?.title).toBe(
      'a quokka juggling tangerines at dusk',
    )
    expect(result.next).toBeNull()
  })

  it('finds a run by its other inputs, and takes the last word as a prefix from 3 letters on', () => {
    const byInput = find({ text: 'marmalade', kind: 'runs' })
    expect(ids(byInput.items)).toEqual([dispatched.portrait.id])
    expect(byInput.items[0]?.matchedIn).toBe('input')

    expect(ids(find({ text: 'quok', kind: 'runs' }).items)).toEqual(
      ids([dispatched.juggler, dispatched.portrait]),
    )
    expect(ids(find({ text: 'gouache quo', kind: 'runs' }).items)).toEqual([dispatched.portrait.id])
    // Two letters are matched as a whole word only.
    expect(find({ text: 'qu', kind: 'runs' }).items).toEqual([])
  })

  it('finds runs by their log lines', () => {
    const word = 'composing'
    // Whatever logs the mirror holds (the sync brings those of recent runs; the ones of the runs
    // dispatched here were written above): the runs whose lines have the word.
    const lines = dbs.mirror.db.prepare('SELECT run_id, message FROM run_logs').raw().all() as [
      string,
      string,
    ][]
    const expected = [
      ...new Set(lines.filter(([, message]) => words(message).has(word)).map(([id]) => id)),
    ].sort()
    expect(expected).toEqual(expect.arrayContaining([dispatched.lighthouse.id]))
    expect(runs.some((run) => words(JSON.stringify(run.input)).has(word))).toBe(false)
    const result = findAll({ text: word, kind: 'runs', limit: 100 })
    expect(ids(result)).toEqual(expected)
    for (const item of result) {
      expect(item.matchedIn).toBe('log')
      expect(highlighted(item)).toEqual([word])
    }
  })

  it('finds the runs of a model by its name', () => {
    const upscale = runs.filter((run) => run.model_slug === 'atelier/upscale')
    expect(upscale.length).toBeGreaterThan(0)
    const found = findAll({ text: 'upscale', kind: 'runs', limit: 100 })
    expect(idsOf(found, 'run')).toEqual(expect.arrayContaining(ids(upscale)))
    // By the model's name, or by a log line that names it (those of runs whose logs were synced).
    const matched = found.filter((i) => upscale.some((run) => run.id === i.id))
    expect(matched.every((i) => i.matchedIn === 'model' || i.matchedIn === 'log')).toBe(true)
    expect(matched.find((i) => i.matchedIn === 'model')).toMatchObject({
      kind: 'run',
      model: 'atelier/upscale',
      title: 'atelier/upscale',
    })
  })

  it('finds an evaluation by its prompt, by a judge’s reasoning and by an issue', () => {
    const byPrompt = find({ text: 'wombat', kind: 'evaluations' })
    expect(ids(byPrompt.items)).toEqual([wombatEvaluation.id])
    expect(byPrompt.items[0]).toMatchObject({
      kind: 'evaluation',
      matchedIn: 'prompt',
      feedback: 'positive',
    })

    // A word found in one place only of an evaluation: there is nowhere else it can match.
    const notes = (e: Evaluation) => [
      e.generation_prompt,
      e.task_description,
      e.evaluation_instructions,
      e.feedback_reason,
      e.override_reason,
      ...(e.top_issues ?? []),
      ...(e.top_strengths ?? []),
      ...(e.gate_failures ?? []).map((g) => g.message),
    ]
    const judges = (e: Evaluation) => (e.judges ?? []).flatMap((j) => [j.name, j.reasoning])
    const reasonings = (e: Evaluation) => (e.judges ?? []).map((j) => j.reasoning)
    const issues = (e: Evaluation) =>
      (e.judges ?? []).flatMap((j) => (j.issues ?? []).flatMap((i) => [i.code, i.description]))
    const onlyIn = (
      place: (e: Evaluation) => (string | null | undefined)[],
      elsewhere: ((e: Evaluation) => (string | null | undefined)[])[],
    ) => {
      // The rarest such word, so that every record holding it is ranked, not only the newest.
      const holders = (w: string) =>
        evaluations.filter((e) => JSON.stringify(e).toLowerCase().includes(w)).length
      let best: { id: string; word: string; holders: number } | null = null
      for (const e of evaluations) {
        const taken = new Set(elsewhere.flatMap((other) => other(e).flatMap((t) => [...words(t)])))
        for (const word of new Set(place(e).flatMap((t) => [...words(t)]))) {
          if (!e.id || word.length < 5 || taken.has(word)) continue
          const count = holders(word)
          if (best === null || count < best.holders) best = { id: e.id, word, holders: count }
        }
      }
      if (best === null) throw new Error('no evaluation has such a word')
      return best
    }
    const names = (e: Evaluation) => (e.judges ?? []).map((j) => j.name)
    const reasoning = onlyIn(reasonings, [notes, names, issues])
    const byReasoning = findAll({ text: reasoning.word, kind: 'evaluations', limit: 100 })
    expect(byReasoning.find((i) => i.id === reasoning.id)?.matchedIn).toBe('judge reasoning')
    const issue = onlyIn(issues, [notes, judges])
    const byIssue = findAll({ text: issue.word, kind: 'evaluations', limit: 100 })
    expect(byIssue.find((i) => i.id === issue.id)?.matchedIn).toBe('issue')
    expect(highlighted(byIssue.find((i) => i.id === issue.id))).toContain(issue.word)
  })

  it('finds assets by name and by the path of their folder, and every kind at once', () => {
    const byName = find({ text: 'tangerine', kind: 'assets' })
    expect(ids(byName.items)).toEqual([tangerineAsset.id])
    expect(byName.items[0]).toMatchObject({
      matchedIn: 'name',
      folderPath: '/Wombat references',
    })
    expect(find({ text: 'wombat', kind: 'assets' }).items).toEqual([
      expect.objectContaining({ id: tangerineAsset.id, matchedIn: 'folder' }),
    ])

    // A word of the path of a folder that holds assets, in no asset's name.
    const holding = folders.filter((f) => assets.some((a) => a.folder_id === f.id))
    const word = holding
      .flatMap((f) => [...words(f.path)])
      .find((w) => w.length >= 4 && !assets.some((a) => words(a.name).has(w)))
    if (word === undefined) throw new Error('no folder word to search for')
    const matching = folders.filter((f) => words(f.path).has(word))
    const inThem = assets.filter((a) => matching.some((f) => f.id === a.folder_id))
    const found = findAll({ text: word, kind: 'assets', limit: 100 })
    expect(idsOf(found, 'asset')).toEqual(ids(inThem))
    expect(found.every((i) => i.matchedIn === 'folder')).toBe(true)

    // No kind: the run whose prompt says tangerines (a prefix of the word) and the asset.
    const everywhere = find({ text: 'tangerine' })
    expect(everywhere.items.map((i) => `${i.kind}:${i.id}`).sort()).toEqual(
      [`asset:${tangerineAsset.id}`, `run:${dispatched.juggler.id}`].sort(),
    )
  })

  it('applies filters to ranked results', () => {
    const succeeded = find({ text: 'quokka', kind: 'runs', status: 'succeeded' })
    expect(ids(succeeded.items)).toEqual(
      ids([dispatched.juggler, dispatched.portrait].filter((r) => r.status_code === 'succeeded')),
    )
    expect(find({ text: 'quokka', kind: 'runs', status: 'canceled' }).items).toEqual([])
    expect(find({ text: 'quokka', kind: 'runs', model: 'atelier/upscale' }).items).toEqual([])

    const red = runs.filter((r) =>
      words(typeof r.input.prompt === 'string' ? r.input.prompt : '').has('red'),
    )
    expect(red.length).toBeGreaterThan(3)
    const t2i = findAll({ text: 'red', kind: 'runs', model: 'atelier/text-to-image', limit: 100 })
    expect(ids(t2i)).toEqual(ids(red.filter((r) => r.model_slug === 'atelier/text-to-image')))

    const middle = Date.parse(red[Math.floor(red.length / 2)]?.created_at ?? '')
    const from = new Date(middle - 10 * DAY).toISOString().slice(0, 10)
    const to = new Date(middle + 10 * DAY).toISOString().slice(0, 10)
    const inRange = red.filter((r) => {
      const ms = Date.parse(r.created_at)
      return ms >= Date.parse(from) && ms < Date.parse(to) + DAY
    })
    expect(inRange.length).toBeGreaterThan(0)
    expect(ids(findAll({ text: 'red', kind: 'runs', from, to, limit: 100 }))).toEqual(ids(inRange))

    const failedEvaluations = findAll({ text: 'red', kind: 'evaluations', verdict: 'failed' })
    expect(failedEvaluations.every((e) => e.kind === 'evaluation' && e.verdict === 'failed')).toBe(
      true,
    )
  })

  it('pages through a ranking with no repeat and no gap', () => {
    const whole = findAll({ text: 'red', limit: 100 })
    expect(whole.length).toBeGreaterThan(12)
    const paged = findAll({ text: 'red', limit: 5 })
    expect(paged.map((i) => `${i.kind}:${i.id}`)).toEqual(whole.map((i) => `${i.kind}:${i.id}`))
    const scores = whole.map((i) => i.score ?? 0)
    expect(scores).toEqual([...scores].sort((a, b) => b - a))
  })
})

describe('filtered lists (no words)', () => {
  it('lists runs by status, model, both, and a date range, newest first', () => {
    const cases: [SearchQueryInput, Run[]][] = [
      [{ status: 'failed' }, runs.filter((r) => r.status_code === 'failed')],
      [
        { model: 'atelier/text-to-image' },
        runs.filter((r) => r.model_slug === 'atelier/text-to-image'),
      ],
      [
        { status: 'succeeded', model: 'atelier/caption' },
        runs.filter((r) => r.status_code === 'succeeded' && r.model_slug === 'atelier/caption'),
      ],
    ]
    const sorted = [...runs].sort((a, b) => Date.parse(a.created_at) - Date.parse(b.created_at))
    const from = sorted[Math.floor(sorted.length / 3)]?.created_at.slice(0, 10) ?? ''
    const to = sorted[Math.floor((sorted.length * 2) / 3)]?.created_at.slice(0, 10) ?? ''
    cases.push([
      { from, to },
      runs.filter(
        (r) =>
          Date.parse(r.created_at) >= Date.parse(from) &&
          Date.parse(r.created_at) < Date.parse(to) + DAY,
      ),
    ])
    for (const [filters, expected] of cases) {
      expect(expected.length, JSON.stringify(filters)).toBeGreaterThan(0)
      const found = findAll({ kind: 'runs', ...filters, limit: 17 })
      expect(ids(found), JSON.stringify(filters)).toEqual(ids(expected))
      const times = found.map((i) => Date.parse(i.createdAt))
      expect(times).toEqual([...times].sort((a, b) => b - a))
      expect(found.every((i) => i.matchedIn === null && i.score === null)).toBe(true)
    }
  })

  it('lists evaluations by verdict, feedback, status and model', () => {
    const slugOf = new Map(models.map((m) => [m.id, m.slug]))
    const withModel = evaluations.find((e) => e.model_id !== null && slugOf.has(e.model_id))
    const slug = slugOf.get(withModel?.model_id ?? '') ?? ''
    const cases: [SearchQueryInput, Evaluation[]][] = [
      [{ verdict: 'passed' }, evaluations.filter((e) => e.overall_passed === true)],
      [{ verdict: 'failed' }, evaluations.filter((e) => e.overall_passed === false)],
      [{ feedback: 'positive' }, evaluations.filter((e) => e.feedback_is_positive === true)],
      [{ feedback: 'negative' }, evaluations.filter((e) => e.feedback_is_positive === false)],
      [{ feedback: 'none' }, evaluations.filter((e) => e.feedback_is_positive === null)],
      [{ status: 'completed' }, evaluations.filter((e) => e.status_code === 'completed')],
      [{ model: slug }, evaluations.filter((e) => e.model_id === withModel?.model_id)],
    ]
    for (const [filters, expected] of cases) {
      expect(expected.length, JSON.stringify(filters)).toBeGreaterThan(0)
      const found = findAll({ kind: 'evaluations', ...filters, limit: 23 })
      expect(ids(found), JSON.stringify(filters)).toEqual(ids(expected))
    }
    // Feedback is about evaluations only: no kind named, evaluations it is.
    const liked = findAll({ feedback: 'positive' })
    expect(liked.every((i) => i.kind === 'evaluation')).toBe(true)
    expect(ids(liked)).toContain(wombatEvaluation.id)
    expect(ids(liked)).toEqual(ids(evaluations.filter((e) => e.feedback_is_positive === true)))
  })

  it('lists assets by folder (path, id, root) and media type', () => {
    const folder = folders.find(
      (f) => f.path !== '/Wombat references' && assets.some((a) => a.folder_id === f.id),
    )
    if (!folder) throw new Error('the history has no folder with assets')
    const cases: [SearchQueryInput, Asset[]][] = [
      [{ folder: folder.path }, assets.filter((a) => a.folder_id === folder.id)],
      [{ folder: folder.id }, assets.filter((a) => a.folder_id === folder.id)],
      [{ folder: '/' }, assets.filter((a) => a.folder_id === null)],
      [{ mediaType: 'video' }, assets.filter((a) => a.media_type === 'video')],
      [{ mediaType: 'image' }, assets.filter((a) => a.media_type === 'image')],
    ]
    for (const [filters, expected] of cases) {
      expect(expected.length, JSON.stringify(filters)).toBeGreaterThan(0)
      const found = findAll({ kind: 'assets', ...filters, limit: 3 })
      expect(ids(found), JSON.stringify(filters)).toEqual(ids(expected))
    }
    expect(findAll({ folder: '/Wombat references' })).toEqual([
      expect.objectContaining({
        kind: 'asset',
        id: tangerineAsset.id,
        folderPath: '/Wombat references',
      }),
    ])
  })

  it('pages through every kind at once, newest first, with no repeat and no gap', () => {
    const found = findAll({ limit: 9 })
    expect(found.length).toBe(runs.length + evaluations.length + assets.length)
    expect(idsOf(found, 'run')).toEqual(ids(runs))
    expect(idsOf(found, 'evaluation')).toEqual(ids(evaluations))
    expect(idsOf(found, 'asset')).toEqual(ids(assets))
    const times = found.map((i) => Date.parse(i.createdAt))
    expect(times).toEqual([...times].sort((a, b) => b - a))
  })
})

describe('bad input', () => {
  it('answers SEARCH_INVALID_QUERY naming what is wrong', () => {
    expect(invalid({ kind: 'runs', verdict: 'passed' })).toBe('SEARCH_INVALID_QUERY')
    expect(invalid({ kind: 'assets', status: 'failed' })).toBe('SEARCH_INVALID_QUERY')
    expect(invalid({ verdict: 'passed', folder: '/x' })).toBe('SEARCH_INVALID_QUERY')
    expect(invalid({ kind: 'runs', status: 'completed' })).toBe('SEARCH_INVALID_QUERY')
    expect(invalid({ model: 'text-to-image' })).toBe('SEARCH_INVALID_QUERY')
    expect(invalid({ from: 'yesterday' })).toBe('SEARCH_INVALID_QUERY')
    expect(invalid({ from: '2026-03-02', to: '2026-03-01' })).toBe('SEARCH_INVALID_QUERY')
    expect(invalid({ limit: 0 })).toBe('SEARCH_INVALID_QUERY')
    expect(invalid({ text: '*** ---' })).toBe('SEARCH_INVALID_QUERY')
    expect(invalid({ text: 'x', sort: 'name' })).toBe('SEARCH_INVALID_QUERY')
    expect(invalid({ folder: '/No such folder' })).toBe('SEARCH_INVALID_QUERY')
    expect(invalid('red')).toBe('SEARCH_INVALID_QUERY')
    expect(() => search.search({ orgId }, { kind: 'runs', verdict: 'passed' })).toThrow(
      /verdict does not apply to runs; the filters of each kind are runs: status, model, from, to; evaluations: /,
    )
  })

  it('answers SEARCH_INVALID_CURSOR for a cursor of another search or none at all', () => {
    const first = find({ kind: 'runs', limit: 2 })
    expect(first.next).not.toBeNull()
    expect(invalid({ kind: 'runs', status: 'failed', cursor: first.next })).toBe(
      'SEARCH_INVALID_CURSOR',
    )
    expect(invalid({ text: 'red', kind: 'runs', cursor: first.next })).toBe('SEARCH_INVALID_CURSOR')
    expect(invalid({ kind: 'runs', cursor: 'not-a-cursor' })).toBe('SEARCH_INVALID_CURSOR')
    // The page size may change between pages.
    expect(find({ kind: 'runs', limit: 3, cursor: first.next }).items).toHaveLength(3)
  })
})

/** Runs the real `atelier` binary, as a user would. */
function atelier(...args: string[]) {
  const result = spawnSync(process.execPath, [join(root, 'bin', 'atelier.mjs'), ...args], {
    cwd: root,
    encoding: 'utf8',
    timeout: 30_000,
    env: { ...process.env, NO_COLOR: '1' },
  })
  return { code: result.status, stdout: result.stdout, stderr: result.stderr }
}

async function inProcess(...args: string[]) {
  let stdout = ''
  let stderr = ''
  const code = await runCli(args, {
    stdout: (text) => void (stdout += text),
    stderr: (text) => void (stderr += text),
  })
  return { code, stdout, stderr }
}

describe('offline, and atelier search', () => {
  it('finds the profile’s organization in the mirror, then searches with the service gone', async () => {
    expect(syncedOrganizations(dbs.mirror, PROFILE).map((o) => o.orgId)).toEqual([orgId])
    await sandbox.close()
    await expect(fetch(`${sandbox.url}/v1/health`)).rejects.toThrow()
    expect(ids(find({ text: 'quokka', kind: 'runs' }).items)).toEqual(
      ids([dispatched.juggler, dispatched.portrait]),
    )
    expect(findAll({ kind: 'evaluations', limit: 100 })).toHaveLength(evaluations.length)
  })

  it('prints a table with the match in brackets, and JSON for scripts', () => {
    const people = atelier('--home', home, '--profile', PROFILE, 'search', 'quokka', 'juggling')
    expect(people.stderr).toBe('')
    expect(people.code).toBe(0)
    expect(people.stdout).toContain('a quokka juggling tangerines at dusk')
    expect(people.stdout).toMatch(/prompt: .*\[quokka\] \[juggling\]/)
    expect(people.stdout).toMatch(/^run +\d{4}-\d\d-\d\d \d\d:\d\d {2}succeeded/m)

    const scripts = atelier(
      '--home',
      home,
      '--profile',
      PROFILE,
      '--json',
      'search',
      '--kind',
      'runs',
      '--status',
      'failed',
      '--limit',
      '5',
    )
    expect(scripts.code).toBe(0)
    const result = JSON.parse(scripts.stdout) as SearchResult
    expect(result.mode).toBe('list')
    expect(result.items).toHaveLength(5)
    expect(result.items.every((i) => i.kind === 'run' && i.status === 'failed')).toBe(true)
    expect(result.next).toEqual(expect.any(String))
  })

  it('refuses a flag of another kind with exit 2, saying which flags go with which kind', () => {
    const wrong = atelier('--home', home, 'search', 'red', '--kind', 'runs', '--verdict', 'passed')
    expect(wrong.code).toBe(2)
    expect(wrong.stderr).toContain('--verdict does not go with --kind runs')
    expect(wrong.stderr).toContain(
      'runs: --status --model --from --to; evaluations: --status --model --from --to --verdict --feedback; assets: --from --to --folder --media-type',
    )
  })

  it('uses the only synced profile when none is named, and pages with --cursor', async () => {
    const first = await inProcess('--home', home, '--json', 'search', 'red', '--limit', '4')
    expect(first.code).toBe(0)
    const page = JSON.parse(first.stdout) as SearchResult
    expect(page.items).toHaveLength(4)
    const second = await inProcess(
      '--home',
      home,
      '--json',
      'search',
      'red',
      '--limit',
      '4',
      '--cursor',
      page.next ?? '',
    )
    const next = JSON.parse(second.stdout) as SearchResult
    expect(next.items.map((i) => i.id)).not.toContain(page.items[0]?.id)
    expect([...page.items, ...next.items].map((i) => `${i.kind}:${i.id}`)).toEqual(
      find({ text: 'red', limit: 8 }).items.map((i) => `${i.kind}:${i.id}`),
    )

    const human = await inProcess('--home', home, 'search', 'red', '--limit', '4')
    expect(human.stdout).toContain('Next page: add --cursor ')

    const bad = await inProcess('--home', home, '--json', 'search', '--from', 'yesterday')
    expect(bad.code).toBe(2)
    expect(JSON.parse(bad.stdout)).toMatchObject({ error: { code: 'SEARCH_INVALID_QUERY' } })
    expect(bad.stderr).toContain('from must be a day such as 2026-03-01')

    const limit = await inProcess('--home', home, 'search', '--limit', '500')
    expect(limit.code).toBe(2)
    expect(limit.stderr).toContain('--limit must be a whole number from 1 to 100')
  })

  it('says nothing was synced yet in an empty home', async () => {
    const empty = mkdtempSync(join(tmpdir(), 'atelier-search-empty-'))
    try {
      const result = await inProcess('--home', empty, 'search', 'red')
      expect(result.code).toBe(1)
      expect(result.stderr).toContain('Nothing synced yet')
      expect(result.stderr).toContain('atelier sync')
      const other = await inProcess('--home', home, '--profile', 'elsewhere', 'search', 'red')
      expect(other.code).toBe(1)
      expect(other.stderr).toContain('Nothing synced yet for profile elsewhere')
    } finally {
      rmSync(empty, { recursive: true, force: true })
    }
  })
})
