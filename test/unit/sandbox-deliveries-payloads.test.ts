import { describe, expect, it } from 'vitest'
import type { components } from '../../src-shared/api'
import {
  batchPayload,
  callbackTime,
  freeze,
  runPayload,
} from '../../src-main/sandbox/deliveries/payloads'
import { checkTarget } from '../../src-main/sandbox/deliveries/sender'
import { contractErrors } from '../helpers/contract-schema'

type Run = components['schemas']['Run']
type Batch = components['schemas']['Batch']

const NOW = Date.parse('2026-03-01T00:00:00.000Z')

function run(id: string, overrides: Partial<Run> = {}): Run {
  return {
    id,
    org_id: '0190c0de-0000-7000-8000-000000000001',
    target_type_code: 'model',
    source_code: 'batch',
    model_id: null,
    model_slug: 'atelier/caption',
    flow_id: null,
    wfengine_workflow_id: null,
    batch_id: null,
    parent_run_id: null,
    status_code: 'succeeded',
    input: {},
    output: { text: 'a fox' },
    metadata: null,
    callback_url: null,
    idempotency_key: null,
    progress: 1,
    cost: null,
    estimated_cost: null,
    failure_code: null,
    failure_stage: null,
    failure_message: null,
    duration_ms: 10,
    created_at: '2026-01-01T00:00:00.000+00:00',
    queued_at: null,
    started_at: null,
    completed_at: '2026-01-01T00:00:01.000+00:00',
    updated_at: '2026-01-01T00:00:01.000+00:00',
    ...overrides,
  }
}

const ids = [
  '0190c0de-0000-7000-8000-00000000000a',
  '0190c0de-0000-7000-8000-00000000000b',
  '0190c0de-0000-7000-8000-00000000000c',
] as const

function batch(statuses: Run['status_code'][], status: Batch['status_code']): Batch {
  return {
    id: '0190c0de-0000-7000-8000-0000000000ba',
    org_id: '0190c0de-0000-7000-8000-000000000001',
    model_slug: 'atelier/caption',
    status_code: status,
    item_count: statuses.length,
    succeeded_count: 0,
    failed_count: 0,
    canceled_count: 0,
    items: statuses.map((s, index) => ({ index, run_id: ids[index] ?? '', status_code: s })),
    callback_url: null,
    metadata: null,
    cost: null,
    created_at: '2026-01-01T00:00:00.000+00:00',
    updated_at: '2026-01-01T00:00:02.000+00:00',
    completed_at: '2026-01-01T00:00:02.000+00:00',
  }
}

describe('callback timestamps', () => {
  it('always carry +00:00, never Z, keeping the precision they have', () => {
    expect(callbackTime('2026-01-01T12:00:00.123456+00:00', NOW)).toBe(
      '2026-01-01T12:00:00.123456+00:00',
    )
    expect(callbackTime('2026-01-01T12:00:00.123456Z', NOW)).toBe(
      '2026-01-01T12:00:00.123456+00:00',
    )
    expect(callbackTime('2026-01-01T14:00:00.5+02:00', NOW)).toBe('2026-01-01T12:00:00.500+00:00')
    expect(callbackTime(null, NOW)).toBe('2026-03-01T00:00:00.000+00:00')
    expect(callbackTime('yesterday', NOW)).toBe('2026-03-01T00:00:00.000+00:00')
  })
})

describe('run payloads', () => {
  it('name the event after the terminal status and match the contract', () => {
    const cases = [
      [run(ids[0]), 'run.completed', { text: 'a fox' }],
      [
        run(ids[1], { status_code: 'failed', failure_code: 'X', failure_message: 'broke' }),
        'run.failed',
        { code: 'X', message: 'broke', errors: null },
      ],
      [run(ids[2], { status_code: 'canceled', output: null }), 'run.cancelled', null],
    ] as const
    for (const [record, event, output] of cases) {
      const payload = runPayload(record, NOW)
      expect(payload).toMatchObject({ event, status: record.status_code, output })
      expect(contractErrors('RunCallbackPayload', payload)).toEqual([])
    }
  })

  it('are not made for runs that have not finished', () => {
    expect(runPayload(run(ids[0], { status_code: 'running' }), NOW)).toBeNull()
  })

  it('freeze to the exact bytes they parse back from', () => {
    const payload = runPayload(run(ids[0], { metadata: { emoji: '🦊', n: 1.5 } }), NOW)
    const frozen = freeze(payload)
    expect(frozen.bytes).toBe(JSON.stringify(payload))
    expect(frozen.payload).toEqual(payload)
    expect(JSON.stringify(frozen.payload)).toBe(frozen.bytes)
  })
})

describe('batch payloads', () => {
  const runs = new Map([
    [ids[0], run(ids[0])],
    [ids[1], run(ids[1], { status_code: 'failed', failure_code: 'X', failure_message: 'm' })],
    [ids[2], run(ids[2], { status_code: 'canceled', output: null })],
  ])
  const runOf = (id: string) => runs.get(id as (typeof ids)[number])

  it('send batch.succeeded only when every item succeeded', () => {
    const all = batchPayload(batch(['succeeded'], 'succeeded'), runOf, NOW)
    expect(all).toMatchObject({
      event: 'batch.succeeded',
      output: { succeeded: 1, failed: 0, cancelled: 0, total: 1 },
      duration_ms: 2000,
    })
    expect(contractErrors('BatchCallbackPayload', all)).toEqual([])
  })

  it('send run.partial_succeeded for failed, canceled or unfinished items, whatever the batch status', () => {
    const mixed = batchPayload(
      batch(['succeeded', 'failed', 'canceled'], 'partial_succeeded'),
      runOf,
      NOW,
    )
    expect(mixed).toMatchObject({
      event: 'run.partial_succeeded',
      status: 'partial_succeeded',
      output: { succeeded: 1, failed: 1, cancelled: 1, total: 3 },
    })
    expect(mixed?.output.items[1]?.output).toEqual({ code: 'X', message: 'm', errors: null })
    expect(contractErrors('BatchCallbackPayload', mixed)).toEqual([])

    const failed = batchPayload(batch(['failed'], 'failed'), () => runOf(ids[1]), NOW)
    expect(failed).toMatchObject({ event: 'run.partial_succeeded', status: 'failed' })

    const stopped = batchPayload(
      batch(['succeeded', 'canceled'], 'canceled'),
      (id) => (id === ids[0] ? runOf(id) : undefined),
      NOW,
    )
    expect(stopped).toMatchObject({
      event: 'run.partial_succeeded',
      status: 'canceled',
      output: { succeeded: 1, failed: 0, cancelled: 1, total: 2 },
    })

    const unfinished = batchPayload(batch(['running'], 'canceled'), () => undefined, NOW)
    expect(unfinished?.output.items[0]).toMatchObject({ status: 'canceled', output: null })
  })

  it('are not made while the batch runs', () => {
    expect(batchPayload(batch(['running'], 'running'), runOf, NOW)).toBeNull()
  })
})

describe('delivery targets', () => {
  it('refuse what cannot be delivered to, before any request', async () => {
    expect(await checkTarget('http://hooks.example.invalid/x')).toMatchObject({ ok: false })
    expect(await checkTarget('ftp://127.0.0.1/x')).toMatchObject({ ok: false })
    expect(await checkTarget('not a url')).toMatchObject({ ok: false })
    expect(await checkTarget('http://0.0.0.0:8080/x')).toMatchObject({ ok: false })
    expect(await checkTarget('http://224.0.0.1/x')).toMatchObject({ ok: false })
    expect(await checkTarget('http://127.0.0.1:9/x')).toMatchObject({ ok: true })
    expect(await checkTarget('http://[::1]:9/x')).toMatchObject({ ok: true })
  })
})
