import type { Asset, Evaluation, Run } from '../../src-shared/api'
import type {
  AssetResult,
  EvaluationResult,
  RunResult,
  SearchKind,
  SearchMatch,
  SearchResultItem,
  SearchSnippet,
} from '../../src-shared/domain/search'
import { TABLE } from './filters'
import type { TextSource } from './sources'
import { shorten, snippetOf } from './snippet'
import type { Phrase } from './text'
import type { Statements } from './statements'

/** What a ranked item adds to its record: where it matched, how it reads there, its score. */
export interface Ranked {
  matchedIn: SearchMatch
  snippet: SearchSnippet | null
  score: number
}

const iso = (ms: number) => new Date(ms).toISOString()

/** The matched row's text, column by column; the first column with a matched word wins. */
export function matchOf(
  statements: Statements,
  source: TextSource,
  rowid: number,
  phrases: readonly Phrase[],
  score: number,
): Ranked {
  const texts = (statements.rows(
    `SELECT ${source.columns.join(', ')} FROM ${source.table} WHERE seq = ?`,
    rowid,
  )[0] ?? []) as (string | null)[]
  for (let i = 0; i < source.columns.length; i++) {
    const snippet = snippetOf(texts[i] ?? null, phrases)
    if (snippet)
      return { matchedIn: source.labels[i] ?? source.labels[0] ?? 'name', snippet, score }
  }
  // Matched by a form of the word this side does not fold alike: say where, show the start.
  const first = texts.find((text) => text) ?? null
  return {
    matchedIn: source.labels[0] ?? 'name',
    snippet: first === null ? null : { text: shorten(first, 120), highlights: [] },
    score,
  }
}

export function recordJson(statements: Statements, kind: SearchKind, seq: number): string | null {
  return (
    (statements.value(`SELECT json FROM ${TABLE[kind]} WHERE seq = ?`, seq) as
      string | undefined) ?? null
  )
}

export function present(
  statements: Statements,
  kind: SearchKind,
  json: string,
  createdMs: number,
  ranked: Ranked | null,
): SearchResultItem {
  const base = {
    createdAt: iso(createdMs),
    snippet: ranked?.snippet ?? null,
    score: ranked === null ? null : Number(ranked.score.toPrecision(6)),
  }
  if (kind === 'runs') {
    const run = JSON.parse(json) as Run
    const prompt = ['prompt', 'positive_prompt', 'text', 'caption']
      .map((key) => run.input[key])
      .find((value): value is string => typeof value === 'string' && value.trim() !== '')
    const item: RunResult = {
      kind: 'run',
      id: run.id,
      orgId: run.org_id,
      ...base,
      title: shorten(prompt ?? run.model_slug ?? `${run.target_type_code} run`),
      matchedIn: (ranked?.matchedIn ?? null) as RunResult['matchedIn'],
      status: run.status_code,
      model: run.model_slug,
      cost: run.cost,
    }
    return item
  }
  if (kind === 'evaluations') {
    const e = JSON.parse(json) as Evaluation
    const item: EvaluationResult = {
      kind: 'evaluation',
      id: e.id ?? '',
      orgId: e.org_id ?? '',
      ...base,
      title: shorten(e.generation_prompt ?? e.task_description ?? 'Evaluation'),
      matchedIn: (ranked?.matchedIn ?? null) as EvaluationResult['matchedIn'],
      status: e.status_code,
      verdict: e.overall_passed === null ? null : e.overall_passed ? 'passed' : 'failed',
      feedback:
        e.feedback_is_positive === null ? 'none' : e.feedback_is_positive ? 'positive' : 'negative',
      passRate: e.weighted_pass_rate,
      runId: e.run_id,
    }
    return item
  }
  const asset = JSON.parse(json) as Asset
  const folderPath =
    asset.folder_id === null
      ? null
      : ((statements.value('SELECT path FROM asset_folders WHERE id = ?', asset.folder_id) as
          string | undefined) ?? null)
  const item: AssetResult = {
    kind: 'asset',
    id: asset.id,
    orgId: asset.org_id,
    ...base,
    title: shorten(asset.name),
    matchedIn: (ranked?.matchedIn ?? null) as AssetResult['matchedIn'],
    mediaType: asset.media_type,
    folderPath,
    sizeBytes: asset.size_bytes,
  }
  return item
}
