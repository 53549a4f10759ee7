// @vitest-environment happy-dom
import { act, cleanup, fireEvent, render, screen, within } from '@testing-library/react'
import { createElement } from 'react'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import type { StoredFlow } from '../../src-shared/domain/flow-editor'
import type { FlowRunEvent } from '../../src-shared/domain/flow-run'
import type { AtelierApi } from '../../src-shared/ipc/api'
import type { IpcResult } from '../../src-shared/ipc/result'
import {
  flowFileToDoc,
  nodeFingerprints,
  type FileFlow,
} from '../../src-renderer/src/flows/document'
import { App } from '../../src-renderer/src/shell/App'
import { useAppStore } from '../../src-renderer/src/store'
import { ShellMain, storedFlow, u } from './shell-transport'

/**
 * What the canvas and the inspector say of a node's result once the flow changed: out of date
 * after an edit of it or of a node upstream, current again after an undo back to its settings,
 * "Cached" only when the run reused it, and a canceled node nowhere "running". The main process
 * is the transport's double; the store, the document and the components are the app's own.
 */

const FLOW = u(1)
const RUN = 'run-1'
const PROMPT = u(11)
const CAPTION = u(12)
const ASIDE = u(13)

/** "Prompt" feeds "Caption"; "Aside" stands apart. */
function flows(): StoredFlow[] {
  const main = storedFlow(FLOW, 'Harbour at dusk')
  const file = main.flow as FileFlow
  const textNode = (id: string, label: string, x: number) => ({
    id,
    label,
    type_code: 'builtin',
    builtin_node_code: 'text',
    x,
    y: 0,
    config: {},
    inputs: [
      {
        id: `${id.slice(0, -4)}a0${id.slice(-2)}`,
        name: 'text',
        variable_type_code: 'text',
        value: '',
      },
    ],
    outputs: [
      { id: `${id.slice(0, -4)}b0${id.slice(-2)}`, name: 'text', variable_type_code: 'text' },
    ],
  })
  const prompt = textNode(PROMPT, 'Prompt', 0)
  prompt.inputs[0] = { ...prompt.inputs[0], value: 'A harbour at dusk' } as never
  const caption = textNode(CAPTION, 'Caption', 300)
  caption.inputs[0] = {
    ...caption.inputs[0],
    value: null,
    source_output_id: prompt.outputs[0]?.id,
  } as never
  const aside = textNode(ASIDE, 'Aside', 0)
  aside.y = 300
  aside.inputs[0] = { ...aside.inputs[0], value: 'Gulls' } as never
  file.nodes = [prompt, caption, aside]
  return [main]
}

let main: ShellMain
let started: (() => Promise<IpcResult<{ flowRunId: string }>>) | null = null

beforeEach(async () => {
  localStorage.clear()
  main = new ShellMain(flows())
  started = () => Promise.resolve({ ok: true, value: { flowRunId: RUN } })
  const api: AtelierApi = {
    ...main.api,
    flowRuns: {
      start: () =>
        started?.() ??
        Promise.resolve({ ok: false, error: { code: 'UNAVAILABLE', message: 'No run here.' } }),
      cancel: () => Promise.resolve({ ok: true, value: null }),
      resume: () =>
        Promise.resolve({ ok: false, error: { code: 'UNAVAILABLE', message: 'No run here.' } }),
    },
  }
  window.atelier = api
  useAppStore.setState(useAppStore.getInitialState(), true)
  render(createElement(App))
  await act(async () => {
    await useAppStore.getState().loadFlows()
    await useAppStore.getState().openFlow(FLOW)
  })
  await screen.findByRole('toolbar', { name: 'Flow editor' }, { timeout: 10_000 })
})

afterEach(async () => {
  await act(async () => {
    await useAppStore.getState().closeFlow()
  })
  cleanup()
  useAppStore.setState(useAppStore.getInitialState(), true)
  delete window.atelier
})

const state = () => useAppStore.getState()
const send = (event: FlowRunEvent) => {
  act(() => {
    main.emit('flowRuns.event', { flowRunId: RUN, event })
  })
}
const base = { flowRunId: RUN, attempt: 1 }
const badge = (label: string) =>
  within(screen.getByTestId(`node-${label}`)).getByTestId('node-state')
const badges = () => ['Prompt', 'Caption', 'Aside'].map((label) => badge(label).textContent)

async function runAll() {
  await act(async () => {
    await state().startRun()
  })
  send({
    type: 'node-succeeded',
    nodeId: PROMPT,
    outputs: { text: 'A harbour' },
    costMicro: 0,
    ...base,
  })
  send({
    type: 'node-succeeded',
    nodeId: CAPTION,
    outputs: { text: 'A harbour' },
    costMicro: 0,
    ...base,
  })
  send({
    type: 'node-cached',
    nodeId: ASIDE,
    outputs: { text: 'Gulls' },
    fromFlowRunId: 'run-0',
    ...base,
  })
}

async function selectNode(id: string) {
  await act(async () => {
    state().select({ nodeIds: [id], edgeIds: [], groupIds: [] })
    await Promise.resolve()
  })
}

describe('a result made with other settings', () => {
  it('is out of date after an edit, here and downstream, and current again after undo', async () => {
    await runAll()
    expect(badges()).toEqual(['Done', 'Done', 'Cached'])

    await selectNode(PROMPT)
    const field = within(screen.getByTestId('input-text')).getByRole('textbox')
    fireEvent.change(field, { target: { value: 'A harbour at dawn' } })

    // The edited node and the one it feeds say so; the one apart is untouched.
    expect(badges()).toEqual(['Out of date', 'Out of date', 'Cached'])
    expect(badge('Caption').dataset.stale).toBe('true')
    expect(screen.getByTestId('node-Prompt').classList.contains('stale')).toBe(true)
    expect(screen.getByTestId('node-Aside').classList.contains('stale')).toBe(false)
    const inspector = screen.getByTestId('node-inspector')
    expect(within(inspector).getByTestId('inspector-state').textContent).toBe('Out of date')
    expect(inspector.textContent).toContain('run the flow again')

    act(() => {
      state().undo()
    })
    expect(badges()).toEqual(['Done', 'Done', 'Cached'])
    expect(
      within(screen.getByTestId('node-inspector')).getByTestId('inspector-state').textContent,
    ).toBe('Done')

    // Redo brings the other settings back, and with them the mark: never "Cached" for them.
    act(() => {
      state().redo()
    })
    expect(badges()).toEqual(['Out of date', 'Out of date', 'Cached'])
  })

  it('stays current when only the layout or a label changes', async () => {
    await runAll()
    act(() => {
      state().applyNodeChanges([
        { type: 'position', id: CAPTION, position: { x: 900, y: 400 }, dragging: false },
      ])
    })
    await selectNode(ASIDE)
    fireEvent.change(
      within(screen.getByTestId('node-inspector')).getByRole('textbox', { name: 'Label' }),
      {
        target: { value: 'Birds' },
      },
    )
    expect(['Prompt', 'Caption', 'Birds'].map((label) => badge(label).textContent)).toEqual([
      'Done',
      'Done',
      'Cached',
    ])
  })

  it('says "Cached" only for a node the run took from the cache', async () => {
    await act(async () => {
      await state().startRun()
    })
    send({ type: 'node-running', nodeId: PROMPT, ...base })
    send({
      type: 'node-succeeded',
      nodeId: PROMPT,
      outputs: { text: 'A harbour' },
      costMicro: 20_500,
      ...base,
    })
    send({
      type: 'node-cached',
      nodeId: CAPTION,
      outputs: { text: 'A harbour' },
      fromFlowRunId: 'run-0',
      ...base,
    })
    expect(badge('Prompt').textContent).toBe('Done')
    expect(badge('Caption').textContent).toBe('Cached')
    // Not in this run: no badge, nothing claimed of it.
    expect(within(screen.getByTestId('node-Aside')).queryByTestId('node-state')).toBeNull()

    // A new run starts from nothing: the last run's "Cached" is not carried over.
    send({
      type: 'flow-finished',
      flowRunId: RUN,
      state: 'succeeded',
      totals: {
        nodes: 2,
        dispatched: 1,
        cached: 1,
        skipped: 0,
        failed: 0,
        canceled: 0,
        estimateMicro: 20_500,
        costMicro: 20_500,
      },
      outputs: {},
    })
    await act(async () => {
      await state().startRun()
    })
    expect(screen.queryAllByTestId('node-state')).toHaveLength(0)
  })
})

describe('a canceled node', () => {
  it('says "Canceled", and nowhere "running"', async () => {
    await act(async () => {
      await state().startRun()
    })
    send({ type: 'node-running', nodeId: PROMPT, ...base })
    send({ type: 'node-progress', nodeId: PROMPT, fraction: 0.3, message: 'running', ...base })
    send({ type: 'node-queued', nodeId: CAPTION, ...base })
    expect(screen.getByTestId('node-Prompt').textContent).toMatch(/running/i)

    send({ type: 'node-canceled', nodeId: PROMPT, ...base })
    // Caption's own word got lost: the run's end still leaves it canceled, not queued.
    send({
      type: 'flow-finished',
      flowRunId: RUN,
      state: 'canceled',
      totals: {
        nodes: 2,
        dispatched: 1,
        cached: 0,
        skipped: 0,
        failed: 0,
        canceled: 2,
        estimateMicro: 0,
        costMicro: 0,
      },
      outputs: {},
    })

    for (const label of ['Prompt', 'Caption']) {
      const node = screen.getByTestId(`node-${label}`)
      expect(badge(label).textContent).toBe('Canceled')
      expect(node.textContent).not.toMatch(/running|queued/i)
    }
    await selectNode(PROMPT)
    const inspector = screen.getByTestId('node-inspector')
    expect(within(inspector).getByTestId('inspector-state').textContent).toBe('Canceled')
    const lines = within(within(inspector).getByTestId('node-log-lines')).getAllByRole('listitem')
    expect(lines.at(-1)?.textContent).toBe('warning Canceled before it finished.')
  })
})

const docOf = (file: FileFlow) => flowFileToDoc(file)

describe('node fingerprints', () => {
  it('are the same for the same settings whatever the order of keys or the place', () => {
    const [stored] = flows()
    const file = stored?.flow as FileFlow
    const doc = docOf(file)
    const moved = docOf({
      ...file,
      nodes: (file.nodes ?? []).map((node) => ({
        ...node,
        x: (node.x ?? 0) + 500,
        label: `${node.label} moved`,
        config: { ...node.config },
      })),
    })
    expect(nodeFingerprints(moved)).toEqual(nodeFingerprints(doc))
    const edited = docOf({
      ...file,
      nodes: (file.nodes ?? []).map((node) =>
        node.id === PROMPT ? { ...node, config: { steps: 4 } } : node,
      ),
    })
    const before = nodeFingerprints(doc)
    const after = nodeFingerprints(edited)
    expect(after.get(PROMPT)).not.toBe(before.get(PROMPT))
    expect(after.get(CAPTION)).not.toBe(before.get(CAPTION))
    expect(after.get(ASIDE)).toBe(before.get(ASIDE))
  })
})
