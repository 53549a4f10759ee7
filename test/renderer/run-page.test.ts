// @vitest-environment happy-dom
import { act, fireEvent, render, screen, within } from '@testing-library/react'
import { createElement } from 'react'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import type { Run, RunCallbackDelivery, RunLog } from '../../src-shared/api'
import type { RunDetail, RunRefresh, SignatureCheck } from '../../src-shared/domain/run-page'
import type { AtelierApi } from '../../src-shared/ipc/api'
import type { IpcResult } from '../../src-shared/ipc/result'
import { RunCompare, RunPage } from '../../src-renderer/src/runs/page'
import { unavailableApi } from './unavailable-api'
import { installApi, removeApi } from './harness'

const u = (n: number) => `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`
const ok = <T>(value: T): Promise<IpcResult<T>> => Promise.resolve({ ok: true, value })

function run(n: number, over: Partial<Run> = {}): Run {
  return {
    id: u(n),
    org_id: u(77),
    target_type_code: 'model',
    source_code: 'api',
    model_id: u(9),
    model_slug: 'atelier/flaky',
    flow_id: null,
    wfengine_workflow_id: null,
    batch_id: null,
    parent_run_id: null,
    status_code: 'failed',
    input: { prompt: 'a test pattern', failure_rate: 1, seed: 7 },
    output: null,
    metadata: null,
    callback_url: 'http://127.0.0.1:9/callbacks',
    idempotency_key: null,
    progress: 1,
    cost: '0.0000',
    estimated_cost: '0.0010',
    failure_code: 'MODEL_ERROR',
    failure_stage: 'inference',
    failure_message: 'The model crashed during inference.',
    duration_ms: 1500,
    created_at: '2026-03-01T10:00:00+00:00',
    queued_at: '2026-03-01T10:00:00+00:00',
    started_at: '2026-03-01T10:00:00.400+00:00',
    completed_at: '2026-03-01T10:00:01.500+00:00',
    updated_at: '2026-03-01T10:00:01.500+00:00',
    ...over,
  }
}

function log(n: number, level: string, message: string): RunLog {
  return {
    id: u(300 + n),
    run_id: u(1),
    node_run_id: null,
    level_code: level,
    message,
    data: null,
    created_at: `2026-03-01T10:00:0${n}+00:00`,
  }
}

function delivery(n: number, automatic: boolean, attempts: number): RunCallbackDelivery {
  return {
    id: u(400 + n),
    run_id: u(1),
    callback_url: 'http://127.0.0.1:9/callbacks',
    payload_bytes: '{"event":"run.failed"}',
    payload: {
      event: 'run.failed',
      run_id: u(1),
      status: 'failed',
      output: null,
      duration_ms: 1500,
      created_at: '2026-03-01T10:00:00+00:00',
      completed_at: '2026-03-01T10:00:01+00:00',
      metadata: null,
    },
    signing_secret_id: u(5),
    is_automatic: automatic,
    status_code: attempts > 0 ? 'succeeded' : 'pending',
    failure_reason_code: null,
    failure_detail: null,
    attempt_count: attempts,
    max_attempts: 5,
    next_attempt_at: null,
    created_at: '2026-03-01T10:00:02+00:00',
    updated_at: '2026-03-01T10:00:02+00:00',
    completed_at: null,
    attempts: Array.from({ length: attempts }, (_, i) => ({
      id: u(450 + n * 10 + i),
      delivery_id: u(400 + n),
      attempt_number: i + 1,
      status_code: 200,
      response_body: 'taken',
      response_time_ms: 12,
      error_message: null,
      created_at: '2026-03-01T10:00:02+00:00',
    })),
  }
}

function detail(r: Run, deliveries: RunCallbackDelivery[] = [delivery(1, true, 1)]): RunDetail {
  return {
    run: r,
    nodeRuns: [],
    logs: {
      items: [
        log(1, 'debug', 'Input: {"prompt":"a test pattern"}'),
        log(2, 'warning', 'The inference worker missed a heartbeat.'),
        log(3, 'error', 'Inference crashed (simulated failure).'),
      ],
      next: null,
    },
    deliveries,
    logLevels: [
      { code: 'debug', name: 'Debug', color: '#8e8e99' },
      { code: 'info', name: 'Info', color: '#3b82f6' },
      { code: 'warning', name: 'Warning', color: '#d97706' },
      { code: 'error', name: 'Error', color: '#d32f2f' },
    ],
    flow: null,
    detailsFetched: true,
    fetchedMs: 1,
  }
}

/**
 * The main process as the page's channels see it: runs kept in memory and every call recorded.
 * Only the transport is doubled; the store, the components and the words are the app's own.
 */
class RunMain {
  readonly runs = new Map<string, RunDetail>()
  readonly calls: { channel: string; args: unknown }[] = []
  refreshProblem: RunRefresh['problem'] = null
  readonly api: AtelierApi

  constructor() {
    const base = unavailableApi()
    const known = (runId: string) => {
      const found = this.runs.get(runId)
      if (!found) throw new Error(`no run ${runId} in this test`)
      return found
    }
    const notFound = (runId: string): Promise<IpcResult<never>> =>
      Promise.resolve({
        ok: false,
        error: {
          code: 'RUN_NOT_FOUND',
          message: `Run ${runId} is not on this computer and the service does not know it.`,
        },
      })
    const record = (channel: string, args: unknown) => {
      this.calls.push({ channel, args })
    }
    this.api = {
      ...base,
      runs: {
        ...base.runs,
        get: (args) => {
          record('runs.get', args)
          const found = this.runs.get(args.runId)
          return found ? ok(found) : notFound(args.runId)
        },
        refresh: (args) => {
          record('runs.refresh', args)
          const problem = this.refreshProblem
          const found = this.runs.get(args.runId)
          if (!found) return notFound(args.runId)
          return ok({ detail: found, refreshed: problem === null, problem })
        },
        cancel: (args) => {
          record('runs.cancel', args)
          const before = known(args.runId)
          const after = { ...before, run: { ...before.run, status_code: 'canceled' as const } }
          this.runs.set(args.runId, after)
          return ok(after)
        },
        rerun: (args) => {
          record('runs.rerun', args)
          const next = run(2, { parent_run_id: args.runId, source_code: 'rerun' })
          this.runs.set(next.id, detail(next, []))
          return ok({ runId: next.id, estimatedCost: '0.0010' })
        },
      },
      deliveries: {
        ...base.deliveries,
        redeliver: (args) => {
          record('deliveries.redeliver', args)
          const before = known(args.runId)
          const deliveries = [...before.deliveries, delivery(2, false, 1)]
          this.runs.set(args.runId, { ...before, deliveries })
          return ok(deliveries)
        },
        verify: (args) => {
          record('deliveries.verify', args)
          return ok<SignatureCheck>({
            valid: args.secret === 'cbsec_right',
            secretFrom: 'pasted',
            remembered: args.remember === true,
          })
        },
      },
    }
  }

  callsTo(channel: string) {
    return this.calls.filter((call) => call.channel === channel)
  }
}

let main: RunMain
let closed = 0

beforeEach(() => {
  main = new RunMain()
  main.runs.set(u(1), detail(run(1)))
  closed = 0
  installApi(main.api)
})

afterEach(() => {
  removeApi()
})

/** Runs `run` inside act and lets the store's answers (already resolved) land. */
async function settled(run: () => void) {
  await act(() => {
    run()
    return Promise.resolve()
  })
}

async function openPage(runId = u(1)) {
  render(
    createElement(RunPage, {
      runId,
      onClose: () => {
        closed++
      },
    }),
  )
  await act(async () => {})
}

describe('the run page', () => {
  it('shows a failed run: the failure in plain words, the status, the timeline and the log', async () => {
    await openPage()
    const failure = screen.getByRole('alert')
    expect(within(failure).getByText('The model crashed')).toBeTruthy()
    expect(failure.querySelector('.run-failure-stage')?.textContent).toBe(' during inference')
    expect(failure.textContent).toContain('The model crashed during inference.')
    expect(failure.textContent).toContain('re-run it')
    expect(failure.textContent).toContain('MODEL_ERROR · stage inference')
    expect(screen.getByRole('heading', { name: 'atelier/flaky' })).toBeTruthy()
    expect(screen.getAllByText('Failed').length).toBeGreaterThan(0)
    const timeline = screen.getByRole('list', { name: 'Status timeline' })
    expect(
      within(timeline)
        .getAllByRole('listitem')
        .map((li) => li.className),
    ).toEqual(['done ', 'done ', 'done failed'])
    // Inputs as a table.
    expect(screen.getByRole('rowheader', { name: 'prompt' }).nextSibling?.textContent).toBe(
      'a test pattern',
    )
    // The page asked the mirror, then the service.
    expect(main.callsTo('runs.get')).toHaveLength(1)
    expect(main.callsTo('runs.refresh')).toHaveLength(1)
  })

  it('filters the log by level, debug hidden at first', async () => {
    await openPage()
    const logLines = () =>
      within(screen.getByRole('log', { name: 'Log lines' })).queryAllByText(/./)
    expect(screen.queryByText(/Input: /)).toBeNull()
    expect(screen.getByText('Inference crashed (simulated failure).')).toBeTruthy()
    const levels = screen.getByRole('group', { name: 'Log levels shown' })
    await settled(() => {
      fireEvent.click(within(levels).getByRole('checkbox', { name: /Debug/ }))
    })
    expect(screen.getByText(/Input: /)).toBeTruthy()
    await settled(() => {
      fireEvent.click(within(levels).getByRole('checkbox', { name: /Error/ }))
    })
    expect(screen.queryByText('Inference crashed (simulated failure).')).toBeNull()
    expect(logLines().length).toBeGreaterThan(0)
  })

  it('lists deliveries with their attempts, and redelivers', async () => {
    await openPage()
    const deliveries = screen.getByRole('region', { name: 'Callback deliveries' })
    expect(within(deliveries).getByText('Delivered')).toBeTruthy()
    const attempts = within(deliveries).getByRole('list', { name: 'Attempts' })
    expect(attempts.textContent).toContain('#1')
    expect(attempts.textContent).toContain('200')
    expect(attempts.textContent).toContain('12 ms')

    await settled(() => {
      fireEvent.click(within(deliveries).getByRole('button', { name: 'Redeliver' }))
    })
    expect(main.callsTo('deliveries.redeliver')).toEqual([
      { channel: 'deliveries.redeliver', args: { runId: u(1) } },
    ])
    // The new one comes first, open, with its attempt.
    const rows = within(deliveries).getAllByRole('button', { expanded: true })
    expect(rows[0]?.textContent).toContain('Redelivery')
    expect(within(deliveries).getAllByText('Delivered')).toHaveLength(2)
  })

  it('checks a signature and forgets the secret it was given', async () => {
    await openPage()
    const deliveries = screen.getByRole('region', { name: 'Callback deliveries' })
    await settled(() => {
      fireEvent.click(within(deliveries).getByRole('button', { name: 'Check a signature…' }))
    })
    const signature = within(deliveries).getByLabelText('Service-Signature the receiver got')
    const secret = within(deliveries).getByLabelText<HTMLInputElement>('Callback secret')
    fireEvent.change(signature, { target: { value: 'ab'.repeat(32) } })
    fireEvent.change(secret, { target: { value: 'cbsec_right' } })
    fireEvent.click(within(deliveries).getByRole('checkbox', { name: /Remember/ }))
    await settled(() => {
      fireEvent.click(within(deliveries).getByRole('button', { name: 'Check signature' }))
    })
    expect(main.callsTo('deliveries.verify')[0]?.args).toEqual({
      runId: u(1),
      deliveryId: u(401),
      signature: 'ab'.repeat(32),
      secret: 'cbsec_right',
      remember: true,
    })
    expect(within(deliveries).getByRole('status').textContent).toContain('The signature is valid')
    expect(within(deliveries).getByRole('status').textContent).toContain('now remembered')
    expect(secret.value).toBe('')

    fireEvent.change(secret, { target: { value: 'cbsec_wrong' } })
    await settled(() => {
      fireEvent.click(within(deliveries).getByRole('button', { name: 'Check signature' }))
    })
    expect(within(deliveries).getByRole('status').textContent).toContain('does not match')
  })

  it('says a re-run is charged again, starts one per confirmation and shows it', async () => {
    await openPage()
    await settled(() => {
      fireEvent.click(screen.getByRole('button', { name: 'Re-run…' }))
    })
    const dialog = screen.getByRole('dialog', { name: 'Re-run' })
    expect(dialog.textContent).toContain('charged again')
    expect(dialog.textContent).toContain('0.0010 credits')
    await settled(() => {
      fireEvent.click(within(dialog).getByRole('button', { name: 'Re-run and pay again' }))
    })
    const [call] = main.callsTo('runs.rerun')
    expect(call?.args).toMatchObject({ runId: u(1), idempotencyKey: expect.any(String) })
    expect(screen.queryByRole('dialog')).toBeNull()
    // The new run is shown in place; Esc goes back to the first one, then closes the page.
    expect(screen.getByText(u(2))).toBeTruthy()
    await settled(() => {
      fireEvent.keyDown(window, { key: 'Escape' })
    })
    expect(screen.getByText(u(1))).toBeTruthy()
    expect(closed).toBe(0)
    await settled(() => {
      fireEvent.keyDown(window, { key: 'Escape' })
    })
    expect(closed).toBe(1)
  })

  it('cancels a run under way, and offers Cancel only then', async () => {
    main.runs.set(
      u(3),
      detail(
        run(3, {
          status_code: 'running',
          completed_at: null,
          cost: null,
          failure_code: null,
          failure_stage: null,
          failure_message: null,
        }),
        [],
      ),
    )
    await openPage(u(3))
    expect(screen.queryByRole('alert')).toBeNull()
    expect(screen.getByRole('button', { name: 'Redeliver' }).getAttribute('title')).toContain(
      'once the run has finished',
    )
    await settled(() => {
      fireEvent.click(screen.getByRole('button', { name: 'Cancel run' }))
    })
    expect(main.callsTo('runs.cancel')).toHaveLength(1)
    expect(screen.queryByRole('button', { name: 'Cancel run' })).toBeNull()
    expect(screen.getAllByText('Canceled').length).toBeGreaterThan(0)
  })

  it('keeps the mirror copy on screen offline, and says so', async () => {
    main.refreshProblem = { code: 'OFFLINE', message: 'The service cannot be reached.' }
    await openPage()
    const stale = screen.getByText(/Showing the run as it was last synced/)
    expect(stale.textContent).toContain('cannot be reached')
    expect(screen.getByText('The model crashed')).toBeTruthy()
  })

  it('says plainly when the run is on neither side', async () => {
    await openPage(u(99))
    // Neither the mirror nor the service has it: the page says why instead of spinning.
    expect(screen.queryByText('Opening the run…')).toBeNull()
    expect(screen.getByRole('alert').textContent).toContain('is not on this computer')
    expect(main.callsTo('runs.refresh')).toHaveLength(1)
  })
})

describe('comparing two runs', () => {
  it('highlights the parameters that differ and shows both outputs', async () => {
    main.runs.set(
      u(2),
      detail(run(2, { input: { prompt: 'a test pattern', failure_rate: 0.5, seed: 7 } })),
    )
    render(
      createElement(RunCompare, {
        runIds: [u(1), u(2)],
        onClose: () => {
          closed++
        },
      }),
    )
    await act(async () => {})
    const params = screen.getByRole('table', { name: 'Input parameters' })
    const changed = [...params.querySelectorAll('tr.changed')].map(
      (row) => row.querySelector('th')?.textContent,
    )
    expect(changed).toEqual(['failure_rate changed'])
    expect(screen.getByText('1 of 3 differ')).toBeTruthy()
    const row = within(params).getByRole('rowheader', { name: /failure_rate/ }).parentElement
    expect([...(row?.querySelectorAll('td') ?? [])].map((td) => td.textContent)).toEqual([
      '1',
      '0.5',
    ])
    expect(screen.getByRole('heading', { name: /Run A/ })).toBeTruthy()
    expect(screen.getByRole('heading', { name: /Run B/ })).toBeTruthy()
    await settled(() => {
      fireEvent.keyDown(window, { key: 'Escape' })
    })
    expect(closed).toBe(1)
  })
})
