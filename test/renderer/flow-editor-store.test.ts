// @vitest-environment happy-dom
import { unavailableApi } from './unavailable-api'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import type { FlowProblem } from '../../src-shared/domain/flow'
import type {
  FlowCheck,
  FlowSummary,
  StartedRun,
  StoredFlow,
} from '../../src-shared/domain/flow-editor'
import type { FlowRunEvent } from '../../src-shared/domain/flow-run'
import type { AtelierApi } from '../../src-shared/ipc/api'
import type { IpcArgs, IpcChannel } from '../../src-shared/ipc/contract'
import type { IpcEvents } from '../../src-shared/ipc/events'
import type { IpcResult } from '../../src-shared/ipc/result'
import {
  docToFlowFile,
  flowFileToDoc,
  inputKey,
  setInputValue,
  type FileFlow,
} from '../../src-renderer/src/flows/document'
import { createAppStore, type AppStore } from '../../src-renderer/src/store'
import { AUTOSAVE_MS } from '../../src-renderer/src/store/editorAutosave'
import { CHECK_MS } from '../../src-renderer/src/store/editorCheck'

// ---- The IPC transport's double: what the main process would answer, kept in memory.

const u = (n: number) => `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`
const FLOW = u(1)
const PROMPT = u(10)
const GENERATE = u(20)
const PROMPT_OUT = u(12)
const GEN_PROMPT = u(21)
const GEN_STEPS = u(23)
const GEN_IMAGE = u(24)

function portraitFile(): FileFlow {
  return {
    id: FLOW,
    name: 'Portrait',
    inputs: [],
    outputs: [],
    nodes: [
      {
        id: PROMPT,
        label: 'Prompt',
        type_code: 'builtin',
        builtin_node_code: 'text',
        x: 0,
        y: 0,
        config: {},
        inputs: [],
        outputs: [{ id: PROMPT_OUT, name: 'text', variable_type_code: 'text' }],
      },
      {
        id: GENERATE,
        label: 'Generate',
        type_code: 'model',
        model_id: u(900),
        x: 300,
        y: 0,
        config: {},
        inputs: [
          {
            id: GEN_PROMPT,
            name: 'prompt',
            variable_type_code: 'text',
            is_required: true,
            value: null,
            source_output_id: null,
          },
          {
            id: GEN_STEPS,
            name: 'steps',
            variable_type_code: 'integer',
            value: 20,
            source_output_id: null,
          },
        ],
        outputs: [{ id: GEN_IMAGE, name: 'image', variable_type_code: 'image' }],
      },
    ],
  }
}

interface Call {
  channel: IpcChannel
  args: unknown
}

const fail = <T>(code: string, message: string): IpcResult<T> => ({
  ok: false,
  error: { code, message },
})

/**
 * Implements the IPC contract's types for the flow editor's channels, in memory: saves are
 * refused with CONFLICT when the flow moved on since `baseUpdatedMs`, as the main process does.
 */
class MainProcessDouble {
  readonly calls: Call[] = []
  readonly flows = new Map<string, StoredFlow>()
  readonly trash = new Map<string, StoredFlow>()
  private clock = 1_000
  private created = 0
  private readonly listeners = new Map<string, Set<(payload: never) => void>>()
  /** What `flowRuns.start` answers; a test may hold it back to let events overtake it. */
  startAnswer: () => Promise<IpcResult<StartedRun>> = () =>
    Promise.resolve({ ok: true, value: { flowRunId: 'run-1' } })

  constructor() {
    this.put({ id: FLOW, name: 'Portrait', flow: portraitFile() })
  }

  put(flow: {
    id: string
    name: string
    flow: Record<string, unknown>
    source?: StoredFlow['source']
  }) {
    const stored: StoredFlow = {
      id: flow.id,
      name: flow.name,
      source: flow.source ?? 'local',
      description: null,
      nodeCount: Array.isArray(flow.flow.nodes) ? flow.flow.nodes.length : 0,
      updatedMs: ++this.clock,
      flow: flow.flow,
      versions: [],
    }
    this.flows.set(stored.id, stored)
    return stored
  }

  /** Another window saves the flow: its `updatedMs` moves on. */
  saveElsewhere(id: string, change: (file: FileFlow) => FileFlow) {
    const stored = this.flows.get(id)
    if (!stored) throw new Error(`no flow ${id}`)
    this.put({ ...stored, flow: change(stored.flow as FileFlow) })
  }

  callsTo(channel: IpcChannel): unknown[] {
    return this.calls.filter((call) => call.channel === channel).map((call) => call.args)
  }

  emit<E extends keyof IpcEvents>(event: E, payload: IpcEvents[E]) {
    for (const listener of this.listeners.get(event) ?? []) {
      ;(listener as (value: IpcEvents[E]) => void)(payload)
    }
  }

  private record<C extends IpcChannel>(channel: C, args: IpcArgs<C>) {
    this.calls.push({ channel, args: structuredClone(args) })
  }

  private summary(stored: StoredFlow): FlowSummary {
    const { flow: _flow, versions: _versions, ...summary } = stored
    return summary
  }

  private found(id: string): IpcResult<StoredFlow> {
    const stored = this.flows.get(id)
    return stored
      ? { ok: true, value: structuredClone(stored) }
      : fail('FLOW_NOT_FOUND', `No flow ${id}.`)
  }

  /** What the executor's check would say of the two rules these tests need. */
  static check(flow: Record<string, unknown>): FlowCheck {
    const problems: FlowProblem[] = []
    const nodes = (flow as FileFlow).nodes ?? []
    nodes.forEach((node, i) => {
      node.inputs?.forEach((input, j) => {
        const fed = input.source_output_id || (input.value !== null && input.value !== undefined)
        if (input.is_required && !fed) {
          problems.push({
            code: 'MISSING_REQUIRED_INPUT',
            message: `Input "${input.name}" of node "${node.label}" is required; connect it, map a flow input to it, or give it a value.`,
            path: `nodes.${i}.inputs.${j}`,
            nodeId: node.id,
            inputName: input.name,
          })
        }
      })
    })
    return {
      problems,
      estimate: { totalMicro: 20_000 * nodes.length, byNode: {} },
      balanceMicro: 5_000_000,
    }
  }

  readonly api: AtelierApi = {
    ...unavailableApi(),
    app: {
      getInfo: () => Promise.resolve(fail('UNAVAILABLE', 'Not part of these tests.')),
      openExternal: () => Promise.resolve(fail('UNAVAILABLE', 'Not part of these tests.')),
    },
    media: {
      preview: () => Promise.resolve(fail('UNAVAILABLE', 'Not part of these tests.')),
    },
    account: {
      summary: () => Promise.resolve(fail('UNAVAILABLE', 'Not part of these tests.')),
    },
    sync: {
      getStatus: () => Promise.resolve(fail('UNAVAILABLE', 'Not part of these tests.')),
      start: () => Promise.resolve(fail('UNAVAILABLE', 'Not part of these tests.')),
    },
    search: {
      query: () => Promise.resolve(fail('UNAVAILABLE', 'Not part of these tests.')),
    },
    flows: {
      list: () => {
        this.record('flows.list', undefined)
        return Promise.resolve({
          ok: true,
          value: [...this.flows.values()].map((stored) => this.summary(stored)),
        })
      },
      get: (args) => {
        this.record('flows.get', args)
        return Promise.resolve(this.found(args.id))
      },
      create: (args) => {
        this.record('flows.create', args)
        const from = args.from === undefined ? undefined : this.flows.get(args.from)
        const id = u(500 + ++this.created)
        const flow = from
          ? { ...structuredClone(from.flow), id, name: args.name }
          : { id, name: args.name, nodes: [], inputs: [], outputs: [] }
        return Promise.resolve({
          ok: true,
          value: structuredClone(this.put({ id, name: args.name, flow })),
        })
      },
      save: (args) => {
        this.record('flows.save', args)
        const stored = this.flows.get(args.id)
        if (!stored) return Promise.resolve(fail('FLOW_NOT_FOUND', `No flow ${args.id}.`))
        if (args.baseUpdatedMs !== undefined && args.baseUpdatedMs !== stored.updatedMs) {
          return Promise.resolve(fail('CONFLICT', 'The flow was saved elsewhere.'))
        }
        const saved = this.put({ ...stored, flow: structuredClone(args.flow) })
        return Promise.resolve({ ok: true, value: { updatedMs: saved.updatedMs } })
      },
      rename: (args) => {
        this.record('flows.rename', args)
        const stored = this.flows.get(args.id)
        if (!stored) return Promise.resolve(fail('FLOW_NOT_FOUND', `No flow ${args.id}.`))
        const renamed = this.put({
          ...stored,
          name: args.name,
          flow: { ...stored.flow, name: args.name },
        })
        return Promise.resolve({ ok: true, value: this.summary(renamed) })
      },
      delete: (args) => {
        this.record('flows.delete', args)
        const stored = this.flows.get(args.id)
        if (!stored) return Promise.resolve(fail('FLOW_NOT_FOUND', `No flow ${args.id}.`))
        this.flows.delete(args.id)
        this.trash.set(args.id, stored)
        return Promise.resolve({ ok: true, value: null })
      },
      restore: (args) => {
        this.record('flows.restore', args)
        const stored = this.trash.get(args.id)
        if (!stored)
          return Promise.resolve(fail('FLOW_NOT_FOUND', `No flow ${args.id} in the trash.`))
        this.trash.delete(args.id)
        this.flows.set(args.id, stored)
        return Promise.resolve({ ok: true, value: this.summary(stored) })
      },
      import: (args) => {
        this.record('flows.import', args)
        return Promise.resolve({
          ok: false,
          error: {
            code: 'FLOW_INVALID',
            message: 'The flow file has 1 problem; fix it and import it again.',
            issues: [{ path: 'nodes.0.label', message: 'nodes.0.label is required; add it.' }],
          },
        })
      },
      export: (args) => {
        this.record('flows.export', args)
        const stored = this.flows.get(args.id)
        return Promise.resolve(
          stored
            ? {
                ok: true,
                value: { fileName: `${stored.name}.flow.json`, json: JSON.stringify(stored.flow) },
              }
            : fail('FLOW_NOT_FOUND', `No flow ${args.id}.`),
        )
      },
      saveVersion: (args) => {
        this.record('flows.saveVersion', args)
        const stored = this.flows.get(args.id)
        if (!stored) return Promise.resolve(fail('FLOW_NOT_FOUND', `No flow ${args.id}.`))
        const version = {
          version: stored.versions.length + 1,
          name: args.name,
          createdMs: ++this.clock,
        }
        stored.versions.unshift(version)
        return Promise.resolve({ ok: true, value: version })
      },
      restoreVersion: (args) => {
        this.record('flows.restoreVersion', args)
        return Promise.resolve(this.found(args.id))
      },
      check: (args) => {
        this.record('flows.check', args)
        return Promise.resolve({ ok: true, value: MainProcessDouble.check(args.flow) })
      },
      palette: () => {
        this.record('flows.palette', undefined)
        return Promise.resolve({ ok: true, value: [] })
      },
      runs: (args) => {
        this.record('flows.runs', args)
        return Promise.resolve({ ok: true, value: [] })
      },
    },
    flowRuns: {
      start: (args) => {
        this.record('flowRuns.start', args)
        return this.startAnswer()
      },
      cancel: (args) => {
        this.record('flowRuns.cancel', args)
        return Promise.resolve({ ok: true, value: null })
      },
      resume: (args) => {
        this.record('flowRuns.resume', args)
        return this.startAnswer()
      },
    },
    on: (event, listener) => {
      const set = this.listeners.get(event) ?? new Set()
      this.listeners.set(event, set)
      set.add(listener)
      return () => {
        set.delete(listener)
      }
    },
  }
}

// ---- Helpers

let main: MainProcessDouble
let store: AppStore

beforeEach(() => {
  vi.useFakeTimers()
  main = new MainProcessDouble()
  window.atelier = main.api
  store = createAppStore(() => main.api)
})

afterEach(() => {
  vi.useRealTimers()
  delete window.atelier
})

const state = () => store.getState()
const history = () => store.temporal.getState()

async function openPortrait() {
  expect(await state().openFlow(FLOW)).toBe(true)
  // The first check runs right after opening.
  await vi.advanceTimersByTimeAsync(0)
}

const connectPromptToGenerate = () => {
  state().connectPorts({
    source: PROMPT,
    sourceHandle: PROMPT_OUT,
    target: GENERATE,
    targetHandle: GEN_PROMPT,
  })
}

const setSteps = (steps: number | null, merge?: { key: string; windowMs: number }) => {
  state().editDoc((doc) => setInputValue(doc, GENERATE, GEN_STEPS, steps), merge)
}

const stepsOf = (file: unknown) =>
  (file as FileFlow).nodes?.[1]?.inputs?.find((input) => input.id === GEN_STEPS)?.value

const stepsNow = () => stepsOf(docToFlowFile(state().doc ?? flowFileToDoc({ id: FLOW, name: 'x' })))

// ---- The tests

describe('the editor document, with undo and redo', () => {
  it('opens a flow as the document the file describes, with nothing to undo', async () => {
    await openPortrait()
    expect(state().editor).toMatchObject({ id: FLOW, name: 'Portrait', readOnly: false })
    expect(docToFlowFile(state().doc ?? flowFileToDoc({ id: FLOW, name: 'x' }))).toEqual(
      portraitFile(),
    )
    expect(history().pastStates).toHaveLength(0)
  })

  it('undoes and redoes each edit, and nothing but the document', async () => {
    await openPortrait()
    const opened = state().doc
    connectPromptToGenerate()
    const connected = state().doc
    setSteps(35)
    const final = state().doc
    state().select({ nodeIds: [GENERATE] })

    expect(history().pastStates).toHaveLength(2)
    state().undo()
    expect(state().doc).toBe(connected)
    state().undo()
    expect(state().doc).toBe(opened)
    expect(state().selection.nodeIds).toEqual([GENERATE])
    state().redo()
    state().redo()
    expect(state().doc).toBe(final)
    expect(history().futureStates).toHaveLength(0)
  })

  it('makes one step of typing into one field, and one of a whole drag', async () => {
    await openPortrait()
    const opened = state().doc
    const typing = { key: `value-${GEN_STEPS}`, windowMs: 1000 }
    for (const steps of [3, 30, 300]) {
      setSteps(steps, typing)
      await vi.advanceTimersByTimeAsync(200)
    }
    expect(history().pastStates).toHaveLength(1)
    expect(stepsNow()).toBe(300)
    // A pause longer than the window starts a new step.
    await vi.advanceTimersByTimeAsync(1500)
    setSteps(301, typing)
    expect(history().pastStates).toHaveLength(2)

    for (const [x, dragging] of [
      [310, true],
      [320, true],
      [400, false],
    ] as const) {
      state().applyNodeChanges([
        { id: GENERATE, type: 'position', position: { x, y: 0 }, dragging },
      ])
    }
    expect(history().pastStates).toHaveLength(3)
    expect(state().doc?.nodes[1]?.position).toEqual({ x: 400, y: 0 })
    state().undo()
    expect(state().doc?.nodes[1]?.position).toEqual({ x: 300, y: 0 })
    state().undo()
    state().undo()
    expect(state().doc).toBe(opened)
  })

  it('deletes the selected node with its edges in one step, and undoes it whole', async () => {
    await openPortrait()
    connectPromptToGenerate()
    const connected = state().doc
    state().select({ nodeIds: [PROMPT] })
    state().deleteSelection()
    expect(state().doc?.nodes.map((node) => node.id)).toEqual([GENERATE])
    expect(state().doc?.nodes[0]?.data.record.inputs?.[0]?.source_output_id).toBeNull()
    expect(state().selection.nodeIds).toEqual([])
    state().undo()
    expect(state().doc).toBe(connected)
  })

  it('pastes what was copied as one step, selected', async () => {
    await openPortrait()
    state().select({ nodeIds: [PROMPT, GENERATE] })
    state().copySelection()
    state().pasteClipboard()
    expect(state().doc?.nodes.map((node) => node.data.record.label)).toEqual([
      'Prompt',
      'Generate',
      'Prompt 2',
      'Generate 2',
    ])
    expect(state().selection.nodeIds).toHaveLength(2)
    expect(history().pastStates).toHaveLength(1)
  })
})

describe('autosave', () => {
  it('saves once after a pause in editing, from the version it started from', async () => {
    await openPortrait()
    const base = main.flows.get(FLOW)?.updatedMs
    connectPromptToGenerate()
    await vi.advanceTimersByTimeAsync(300)
    setSteps(40)
    await vi.advanceTimersByTimeAsync(300)
    setSteps(41)
    expect(state().saveStatus).toBe('pending')

    await vi.advanceTimersByTimeAsync(AUTOSAVE_MS - 1)
    expect(main.callsTo('flows.save')).toHaveLength(0)
    await vi.advanceTimersByTimeAsync(1)
    expect(main.callsTo('flows.save')).toEqual([
      {
        id: FLOW,
        flow: docToFlowFile(state().doc ?? flowFileToDoc({ id: FLOW, name: 'x' })),
        baseUpdatedMs: base,
      },
    ])
    expect(state().saveStatus).toBe('saved')
    expect(stepsOf(main.flows.get(FLOW)?.flow)).toBe(41)

    // The next save starts from what this one made.
    const afterFirst = main.flows.get(FLOW)?.updatedMs
    expect(afterFirst).not.toBe(base)
    setSteps(42)
    await vi.advanceTimersByTimeAsync(AUTOSAVE_MS)
    expect(main.callsTo('flows.save')[1]).toMatchObject({ baseUpdatedMs: afterFirst })
    expect(state().saveStatus).toBe('saved')
    expect(stepsOf(main.flows.get(FLOW)?.flow)).toBe(42)
  })

  it('does not save edits undone back to what was saved', async () => {
    await openPortrait()
    setSteps(50)
    state().undo()
    expect(state().saveStatus).toBe('saved')
    await vi.advanceTimersByTimeAsync(AUTOSAVE_MS * 2)
    expect(main.callsTo('flows.save')).toHaveLength(0)
  })

  it('saves what is pending before the editor closes', async () => {
    await openPortrait()
    setSteps(60)
    await state().closeFlow()
    expect(main.callsTo('flows.save')).toHaveLength(1)
    expect(stepsOf(main.flows.get(FLOW)?.flow)).toBe(60)
    expect(state().editor).toBeNull()
  })

  it('stops at a conflict, says so in plain words, and reloads the other version', async () => {
    await openPortrait()
    main.saveElsewhere(FLOW, (file) => ({ ...file, description: 'Saved in another window' }))
    setSteps(70)
    await vi.advanceTimersByTimeAsync(AUTOSAVE_MS)

    expect(state().saveStatus).toBe('conflict')
    expect(state().saveProblem).toMatch(
      /changed somewhere else.*Reload.*save your version as a copy/,
    )
    setSteps(71)
    await vi.advanceTimersByTimeAsync(AUTOSAVE_MS * 2)
    expect(main.callsTo('flows.save')).toHaveLength(1)

    await state().reloadFlow()
    expect(state().saveStatus).toBe('saved')
    expect(state().doc?.flow.description).toBe('Saved in another window')
    expect(stepsNow()).toBe(20)
    expect(history().pastStates).toHaveLength(0)
  })

  it('after a conflict, saves the edits as a copy and goes on editing the copy', async () => {
    await openPortrait()
    main.saveElsewhere(FLOW, (file) => ({ ...file, description: 'Saved in another window' }))
    setSteps(80)
    await vi.advanceTimersByTimeAsync(AUTOSAVE_MS)
    expect(state().saveStatus).toBe('conflict')

    await state().saveAsCopy()
    const copy = state().editor
    expect(copy?.name).toBe('Portrait copy')
    expect(copy?.id).not.toBe(FLOW)
    expect(main.callsTo('flows.create')).toEqual([{ name: 'Portrait copy', from: FLOW }])
    const stored = main.flows.get(copy?.id ?? '')
    expect(stepsOf(stored?.flow)).toBe(80)
    expect(stored?.flow).toMatchObject({ id: copy?.id, name: 'Portrait copy' })
    // The other window's version is left as it was.
    expect(stepsOf(main.flows.get(FLOW)?.flow)).toBe(20)
    expect(state().saveStatus).toBe('saved')

    setSteps(81)
    await vi.advanceTimersByTimeAsync(AUTOSAVE_MS)
    expect(state().saveStatus).toBe('saved')
    expect(stepsOf(main.flows.get(copy?.id ?? '')?.flow)).toBe(81)
  })

  it('does not save a template; editing a copy makes a local flow', async () => {
    main.put({
      id: u(2),
      name: 'Sketch',
      source: 'template',
      flow: { ...portraitFile(), id: u(2), name: 'Sketch' },
    })
    expect(await state().openFlow(u(2))).toBe(true)
    expect(state().editor?.readOnly).toBe(true)
    setSteps(90)
    expect(stepsNow()).toBe(20)

    await state().editCopy()
    expect(state().editor).toMatchObject({ name: 'Sketch copy', readOnly: false, source: 'local' })
    setSteps(90)
    await vi.advanceTimersByTimeAsync(AUTOSAVE_MS)
    expect(stepsOf(main.flows.get(state().editor?.id ?? '')?.flow)).toBe(90)
  })
})

describe('the check', () => {
  it('checks after a pause in editing and places the problems on nodes and inputs', async () => {
    await openPortrait()
    expect(main.callsTo('flows.check')).toHaveLength(1)
    const promptInput = inputKey(GENERATE, 'prompt')
    expect(
      state()
        .problems.byInput.get(promptInput)
        ?.map((p) => p.code),
    ).toEqual(['MISSING_REQUIRED_INPUT'])
    expect(state().problems.byNode.get(GENERATE)).toHaveLength(1)
    expect(state().check?.estimate?.totalMicro).toBe(40_000)

    setSteps(21)
    await vi.advanceTimersByTimeAsync(100)
    connectPromptToGenerate()
    await vi.advanceTimersByTimeAsync(CHECK_MS - 1)
    expect(main.callsTo('flows.check')).toHaveLength(1)
    await vi.advanceTimersByTimeAsync(1)
    expect(main.callsTo('flows.check')).toHaveLength(2)
    expect(state().problems.byInput.get(promptInput)).toBeUndefined()
    expect(state().problems.count).toBe(0)
  })
})

describe('runs', () => {
  const base = { flowRunId: 'run-1', attempt: 1 }
  const send = (event: FlowRunEvent, flowRunId = 'run-1') => {
    main.emit('flowRuns.event', { flowRunId, event })
  }

  it('shows live node states, events that overtake the start answer included', async () => {
    await openPortrait()
    let answer: (result: IpcResult<StartedRun>) => void = () => undefined
    main.startAnswer = () =>
      new Promise((resolve) => {
        answer = resolve
      })
    const started = state().startRun({ inputs: { subject: 'a cat' } })
    expect(state().runPhase).toBe('starting')
    send({
      type: 'flow-started',
      flowRunId: 'run-1',
      flowId: FLOW,
      resumed: false,
      estimateMicro: 40_000,
      estimateByNode: {},
    })
    send({ type: 'node-queued', nodeId: GENERATE, ...base })
    answer({ ok: true, value: { flowRunId: 'run-1' } })
    expect(await started).toBe(true)

    expect(state().runPhase).toBe('running')
    expect(state().run?.estimateMicro).toBe(40_000)
    expect(state().nodeRuns[GENERATE]?.state).toBe('queued')

    send({ type: 'node-running', nodeId: GENERATE, ...base })
    send({ type: 'node-log', nodeId: GENERATE, level: 'info', message: 'step 4/20', ...base })
    // Another run's events are not this editor's.
    send(
      { type: 'node-failed', nodeId: GENERATE, ...base, error: { code: 'X', message: 'no' } },
      'run-0',
    )
    expect(state().nodeRuns[GENERATE]).toMatchObject({
      state: 'running',
      lastLog: { message: 'step 4/20' },
    })
    send({
      type: 'node-succeeded',
      nodeId: GENERATE,
      outputs: {
        image: { kind: 'media', sha256: 'a'.repeat(64), content_type: 'image/png', url: 'x' },
      },
      costMicro: 21_000,
      ...base,
    })
    send({
      type: 'flow-finished',
      flowRunId: 'run-1',
      state: 'succeeded',
      totals: {
        nodes: 2,
        dispatched: 1,
        cached: 1,
        skipped: 0,
        failed: 0,
        canceled: 0,
        estimateMicro: 40_000,
        costMicro: 21_000,
      },
      outputs: {},
    })
    expect(state().nodeRuns[GENERATE]).toMatchObject({ state: 'succeeded', costMicro: 21_000 })
    expect(state().runPhase).toBe('ended')
    expect(state().run?.state).toBe('succeeded')

    const [args] = main.callsTo('flowRuns.start')
    expect(args).toEqual({
      flow: docToFlowFile(state().doc ?? flowFileToDoc({ id: FLOW, name: 'x' })),
      inputs: { subject: 'a cat' },
      force: [],
    })
  })

  it('runs to a node, forces a node again, and cancels', async () => {
    await openPortrait()
    expect(await state().startRun({ only: [GENERATE] })).toBe(true)
    expect(main.callsTo('flowRuns.start')[0]).toMatchObject({ only: [GENERATE], force: [] })

    await state().cancelRun()
    expect(main.callsTo('flowRuns.cancel')).toEqual([{ flowRunId: 'run-1' }])
    expect(state().runPhase).toBe('canceling')
    send({ type: 'node-canceled', nodeId: GENERATE, ...base })
    send({
      type: 'flow-finished',
      flowRunId: 'run-1',
      state: 'canceled',
      totals: {
        nodes: 1,
        dispatched: 1,
        cached: 0,
        skipped: 0,
        failed: 0,
        canceled: 1,
        estimateMicro: 0,
        costMicro: 0,
      },
      outputs: {},
    })
    expect(state().runPhase).toBe('ended')
    expect(state().nodeRuns[GENERATE]?.state).toBe('canceled')

    main.startAnswer = () => Promise.resolve({ ok: true, value: { flowRunId: 'run-2' } })
    expect(await state().startRun({ force: [PROMPT] })).toBe(true)
    expect(main.callsTo('flowRuns.start')[1]).toMatchObject({ force: [PROMPT] })
    expect(main.callsTo('flowRuns.start')[1]).not.toHaveProperty('only')
    expect(state().nodeRuns).toEqual({})
  })

  it('says why a run was refused', async () => {
    await openPortrait()
    main.startAnswer = () =>
      Promise.resolve(fail('RUN_REFUSED', 'The estimate is more than the balance; top up.'))
    expect(await state().startRun()).toBe(false)
    expect(state().runPhase).toBe('idle')
    expect(state().runProblem).toBe('The estimate is more than the balance; top up.')
  })
})

describe('the flow list', () => {
  it('deletes a flow with an undo that restores it', async () => {
    await state().loadFlows()
    expect(state().flows?.map((flow) => flow.name)).toEqual(['Portrait'])
    await state().deleteFlow(FLOW)
    expect(state().flows).toEqual([])
    expect(state().deletedFlow?.name).toBe('Portrait')

    await state().undoDelete()
    expect(main.callsTo('flows.restore')).toEqual([{ id: FLOW }])
    expect(state().flows?.map((flow) => flow.name)).toEqual(['Portrait'])
    expect(state().deletedFlow).toBeNull()
  })

  it('duplicates under a free name, and renames the open flow without a conflict', async () => {
    await state().loadFlows()
    const copy = await state().duplicateFlow(FLOW)
    expect(main.callsTo('flows.create')).toEqual([{ name: 'Portrait copy', from: FLOW }])
    await state().duplicateFlow(FLOW)
    expect(main.callsTo('flows.create')[1]).toEqual({ name: 'Portrait copy 2', from: FLOW })

    await state().openFlow(copy?.id ?? '')
    setSteps(33)
    expect(await state().renameFlow(copy?.id ?? '', 'Cat portrait')).toBe(true)
    expect(state().editor?.name).toBe('Cat portrait')
    setSteps(34)
    await vi.advanceTimersByTimeAsync(AUTOSAVE_MS)
    expect(state().saveStatus).toBe('saved')
    expect(main.flows.get(copy?.id ?? '')?.flow).toMatchObject({ name: 'Cat portrait' })
    expect(stepsOf(main.flows.get(copy?.id ?? '')?.flow)).toBe(34)
  })

  it("shows a flow file's problems when it cannot be imported", async () => {
    expect(await state().importFlow('{"id": "x"}')).toBeNull()
    expect(state().flowsProblem).toEqual({
      message: 'The flow file has 1 problem; fix it and import it again.',
      issues: [{ path: 'nodes.0.label', message: 'nodes.0.label is required; add it.' }],
    })
  })
})
