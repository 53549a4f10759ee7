// @vitest-environment happy-dom
import { act, fireEvent, render, screen, within } from '@testing-library/react'
import { createElement } from 'react'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import type { NodeRun, Run, RunCallbackDelivery, RunLog } from '../../src-shared/api'
import type { StoredFlow } from '../../src-shared/domain/flow-editor'
import type { RunDetail, RunRefresh, SignatureCheck } from '../../src-shared/domain/run-page'
import type { AtelierApi } from '../../src-shared/ipc/api'
import type { IpcResult } from '../../src-shared/ipc/result'
import { RunCompare, RunPage } from '../../src-renderer/src/runs/page'
import { useAppStore } from '../../src-renderer/src/store'
import { storedFlow } from './shell-transport'
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
  readonly flows = new Map<string, StoredFlow>()
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
      flows: {
        ...base.flows,
        get: (args) => {
          record('flows.get', args)
          const found = this.flows.get(args.id)
          return found
            ? ok(structuredClone(found))
            : Promise.resolve({
                ok: false,
                error: { code: 'FLOW_NOT_FOUND', message: `No flow ${args.id}.` },
              })
        },
      },
      media: {
        // The local media store's preview: a data URL, as the window's CSP allows.
        preview: (args) => {
          record('media.preview', args)
          return ok({ sha256: args.sha256, dataUrl: `data:image/png;base64,${args.sha256}` })
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

/** A run that finished well, with what it made. */
function succeeded(n: number, output: Run['output']): Run {
  return run(n, {
    status_code: 'succeeded',
    output,
    cost: '0.0200',
    failure_code: null,
    failure_stage: null,
    failure_message: null,
  })
}

const PICTURE = 'ab'.repeat(32)
const NODE_PICTURE = 'cd'.repeat(32)

function nodeRun(n: number, over: Partial<NodeRun>): NodeRun {
  return {
    id: u(600 + n),
    run_id: u(7),
    flow_node_id: null,
    wfengine_node_id: null,
    status_code: 'succeeded',
    input: null,
    output: null,
    cost: '0.0100',
    failure_code: null,
    failure_stage: null,
    failure_message: null,
    started_at: '2026-03-01T10:00:00+00:00',
    completed_at: '2026-03-01T10:00:02.500+00:00',
    created_at: '2026-03-01T10:00:00+00:00',
    updated_at: '2026-03-01T10:00:02.500+00:00',
    ...over,
  }
}

describe('from the run page', () => {
  it('opens the flow that made the run in the editor', async () => {
    main.flows.set(u(60), storedFlow(u(60), 'Harbour at dusk'))
    main.runs.set(u(6), {
      ...detail(succeeded(6, null)),
      flow: { flowRunId: 'flow-run-1', flowId: u(60), flowName: 'Harbour at dusk', nodeId: null },
    })
    useAppStore.getState().goTo('runs')
    await openPage(u(6))
    const flowTerm = screen.getByText('Flow', { selector: 'dt' })
    expect(flowTerm.nextElementSibling?.textContent).toBe('Harbour at dusk')
    await settled(() => {
      fireEvent.click(screen.getByRole('button', { name: 'Open flow' }))
    })
    expect(main.callsTo('flows.get')).toEqual([{ channel: 'flows.get', args: { id: u(60) } }])
    const state = useAppStore.getState()
    expect(state.section).toBe('flows')
    expect(state.editor).toMatchObject({ id: u(60), name: 'Harbour at dusk' })
    expect(state.doc?.nodes.map((node) => node.data.record.label)).toEqual(['Words 1', 'Words 2'])
  })

  it('shows an output over the whole window, zoomed by buttons and wheel, panned by dragging', async () => {
    const url = 'https://files.example/outputs/out.png?signature=abc'
    main.runs.set(
      u(5),
      detail(
        succeeded(5, {
          images: [{ url, content_type: 'image/png', width: 640, height: 480, sha256: PICTURE }],
        }),
      ),
    )
    await openPage(u(5))
    const outputs = screen.getByRole('list', { name: 'Outputs' })
    await settled(() => {
      fireEvent.click(within(outputs).getByRole('button', { name: /Outputs: images\[0\]/ }))
    })
    const box = screen.getByRole('dialog', { name: 'Output, full view' })
    const view = within(box)
    expect(box.querySelector('.run-lightbox-title')?.textContent).toBe('images[0] · 640 × 480')
    // The full view asks the media store for a large picture, from where the run keeps it.
    await act(async () => {})
    expect(main.callsTo('media.preview').map((call) => call.args)).toContainEqual({
      sha256: PICTURE,
      size: 1024,
      url,
    })
    expect(view.getByRole<HTMLImageElement>('img', { name: 'Output images[0]' }).src).toBe(
      `data:image/png;base64,${PICTURE}`,
    )

    const zoom = () => box.querySelector('.run-lightbox-zoom')?.textContent
    const picture = () =>
      (box.querySelector('.run-lightbox-picture') as HTMLElement).style.transform
    const stage = box.querySelector('.run-lightbox-stage') as HTMLElement
    const press = (name: string, times = 1) => {
      act(() => {
        for (let i = 0; i < times; i++) fireEvent.click(view.getByRole('button', { name }))
      })
    }
    expect(zoom()).toBe('100%')
    press('Zoom in')
    expect(zoom()).toBe('125%')
    expect(picture()).toBe('translate(0px, 0px) scale(1.25)')
    press('Zoom out', 2)
    expect(zoom()).toBe('80%')
    act(() => {
      fireEvent.wheel(stage, { deltaY: -120 })
    })
    expect(zoom()).toBe('92%')
    act(() => {
      fireEvent.wheel(stage, { deltaY: 120 })
    })
    expect(zoom()).toBe('80%')
    // Bounded both ways: 800% at most, 25% at least.
    press('Zoom in', 20)
    expect(zoom()).toBe('800%')
    press('Zoom out', 30)
    expect(zoom()).toBe('25%')
    press('Fit')
    expect(zoom()).toBe('100%')

    act(() => {
      fireEvent.pointerDown(stage, { pointerId: 1, clientX: 100, clientY: 100 })
      fireEvent.pointerMove(stage, { pointerId: 1, clientX: 130, clientY: 80 })
      fireEvent.pointerUp(stage, { pointerId: 1 })
      // Released: moving on no longer pans.
      fireEvent.pointerMove(stage, { pointerId: 1, clientX: 300, clientY: 300 })
    })
    expect(picture()).toBe('translate(30px, -20px) scale(1)')
    press('Zoom in')
    act(() => {
      fireEvent.doubleClick(stage)
    })
    expect(picture()).toBe('translate(0px, 0px) scale(1)')

    // Esc closes the full view, not the run page under it.
    act(() => {
      fireEvent.keyDown(view.getByRole('button', { name: 'Zoom in' }), { key: 'Escape' })
    })
    expect(screen.queryByRole('dialog')).toBeNull()
    expect(closed).toBe(0)
    expect(screen.getByRole('list', { name: 'Outputs' })).toBeTruthy()
  })

  it("lists a flow run's node runs, each opening to its own log, failure and outputs", async () => {
    const nodes = [
      nodeRun(1, {
        wfengine_node_id: 'sketch',
        output: {
          image: {
            url: 'https://files.example/sketch.png',
            content_type: 'image/png',
            width: 64,
            height: 64,
            sha256: NODE_PICTURE,
          },
        },
      }),
      nodeRun(2, {
        flow_node_id: u(61),
        status_code: 'failed',
        cost: '0',
        started_at: null,
        completed_at: null,
        failure_code: 'MODEL_ERROR',
        failure_message: 'The ink model gave up.',
      }),
      nodeRun(3, { output: { text: 'a harbour at dusk' }, cost: null }),
    ]
    const nodeLog = (n: number, nodeRunId: string | null, message: string): RunLog => ({
      ...log(n, 'info', message),
      node_run_id: nodeRunId,
    })
    main.runs.set(u(7), {
      ...detail(succeeded(7, null), []),
      nodeRuns: nodes,
      logs: {
        items: [
          nodeLog(1, null, 'The flow started.'),
          nodeLog(2, u(601), 'Sketching the harbour.'),
          nodeLog(3, u(601), 'Sketch done.'),
          nodeLog(4, u(603), 'Captioned.'),
        ],
        next: null,
      },
    })
    await openPage(u(7))
    const card = screen.getByRole('region', { name: 'Node runs' })
    expect(within(card).getByText('3')).toBeTruthy()
    const rows = within(card).getAllByRole('button', { expanded: false })
    expect(rows.map((row) => row.textContent)).toEqual([
      'Succeededsketch2.5 s0.0100 credits',
      'Failed00000000—free',
      'SucceededStep 32.5 s—',
    ])

    // One open at a time: its own log lines only, and the picture it made.
    await settled(() => {
      fireEvent.click(rows[0] as HTMLElement)
    })
    expect(rows[0]?.getAttribute('aria-expanded')).toBe('true')
    const first = rows[0]?.closest('li') as HTMLElement
    expect(first.querySelector('.run-node-log')?.textContent).toBe(
      'info    Sketching the harbour.\ninfo    Sketch done.',
    )
    const strip = within(first).getByRole('list', { name: 'Node outputs' })
    await act(async () => {})
    expect(within(strip).getByRole('img', { name: 'Node outputs: image' })).toBeTruthy()
    expect(main.callsTo('media.preview').map((call) => call.args)).toContainEqual({
      sha256: NODE_PICTURE,
      size: 128,
      url: 'https://files.example/sketch.png',
    })

    await settled(() => {
      fireEvent.click(rows[1] as HTMLElement)
    })
    expect(rows[0]?.getAttribute('aria-expanded')).toBe('false')
    expect(first.querySelector('.run-node-detail')).toBeNull()
    const second = rows[1]?.closest('li') as HTMLElement
    expect(second.querySelector('.run-node-failure')?.textContent).toBe(
      'MODEL_ERROR: The ink model gave up.',
    )
    expect(within(second).getByText('No log lines of its own.')).toBeTruthy()

    // Words it gave, shown as they are, beside its log.
    await settled(() => {
      fireEvent.click(rows[2] as HTMLElement)
    })
    const third = rows[2]?.closest('li') as HTMLElement
    expect([...third.querySelectorAll('.run-node-log')].map((pre) => pre.textContent)).toEqual([
      'info    Captioned.',
      '{"text":"a harbour at dusk"}',
    ])
    await settled(() => {
      fireEvent.click(rows[2] as HTMLElement)
    })
    expect(within(card).queryAllByRole('button', { expanded: true })).toEqual([])
  })

  it('offers neither a flow nor node runs for a run made outside a flow', async () => {
    await openPage()
    expect(screen.queryByText('Flow', { selector: 'dt' })).toBeNull()
    expect(screen.queryByRole('button', { name: 'Open flow' })).toBeNull()
    expect(screen.queryByRole('region', { name: 'Node runs' })).toBeNull()
  })
})

describe('comparing two runs', () => {
  it('highlights the parameters that differ and shows both outputs', async () => {
    main.runs.set(
      u(2),
      detail(
        run(2, {
          input: { prompt: 'a test pattern', failure_rate: 0.5, seed: 7 },
          created_at: '2026-03-02T11:30:00+00:00',
          duration_ms: 4200,
        }),
      ),
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
    expect(screen.getByText('1 of 3 parameters differs')).toBeTruthy()
    // When each run was made and how long it took always differ: shown, not flagged.
    const facts = screen.getByRole('table', { name: 'The runs' })
    expect(facts.querySelectorAll('tr.changed')).toHaveLength(0)
    const created = within(facts).getByRole('rowheader', { name: 'Created' }).parentElement
    const [createdA, createdB] = [...(created?.querySelectorAll('td') ?? [])].map(
      (td) => td.textContent,
    )
    expect(createdA).not.toBe(createdB)
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
