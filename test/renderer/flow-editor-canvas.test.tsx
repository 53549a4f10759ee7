// @vitest-environment happy-dom
import { act, cleanup, fireEvent, render, screen, within } from '@testing-library/react'
import { createElement } from 'react'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import type { StoredFlow } from '../../src-shared/domain/flow-editor'
import type { FlowRunEvent } from '../../src-shared/domain/flow-run'
import type { AtelierApi } from '../../src-shared/ipc/api'
import type { IpcResult } from '../../src-shared/ipc/result'
import {
  edgesOf,
  flowFileToDoc,
  GROUPS_KEY,
  groupsOf,
  RETRY_LABEL,
  retryEdgeId,
  type FileFlow,
} from '../../src-renderer/src/flows/document'
import { App } from '../../src-renderer/src/shell/App'
import { shortcut, type KeyCombo } from '../../src-renderer/src/shell/shortcuts'
import { useAppStore } from '../../src-renderer/src/store'
import { ShellMain, storedFlow, u } from './shell-transport'

/**
 * The editor's canvas features as a person meets them in the window: grouping by the keys the
 * help sheet lists (and undoing it), a sub-flow node's progress and its inner nodes, and a
 * refused run's problems placed on their nodes. The main process is the transport's double;
 * the store, the document and the components are the app's own.
 */

const FLOW = u(1)
const SUB = u(2)
const RUN = 'run-1'

/** A flow of one sub-flow node ("Inked sketch") whose sub-flow has two nodes. */
function withSubFlow(): StoredFlow[] {
  const sub = storedFlow(SUB, 'Sketch and ink')
  const inner = (sub.flow as FileFlow).nodes ?? []
  ;[inner[0], inner[1]].forEach((node, i) => {
    if (node) node.label = i === 0 ? 'Sketch' : 'Ink'
  })
  const main = storedFlow(FLOW, 'Harbour at dusk')
  const nodes = (main.flow as FileFlow).nodes ?? []
  nodes.push({
    id: u(30),
    label: 'Inked sketch',
    type_code: 'sub_flow',
    sub_flow_id: SUB,
    x: 600,
    y: 0,
    config: {},
    inputs: [],
    outputs: [],
  })
  return [main, sub]
}

let main: ShellMain
let started: (() => Promise<IpcResult<{ flowRunId: string }>>) | null = null

beforeEach(async () => {
  localStorage.clear()
  main = new ShellMain(withSubFlow())
  started = null
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
  // The editor's code comes in a chunk of its own: it is open once its toolbar shows.
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
const nodeId = (label: string) =>
  state().doc?.nodes.find((node) => node.data.record.label === label)?.id ?? ''

function press(combo: KeyCombo) {
  const shift = combo.shift === true
  act(() => {
    fireEvent.keyDown(window, {
      key: shift && combo.key.length === 1 ? combo.key.toUpperCase() : combo.key,
      ctrlKey: combo.mod === true,
      shiftKey: shift,
    })
  })
}

/** Presses the shortcut's first combination, as the help sheet shows it. */
const pressShortcut = (id: Parameters<typeof shortcut>[0]) => {
  const [combo] = shortcut(id).keys
  press(combo as KeyCombo)
}

describe('groups', () => {
  it('groups the selected nodes by the key, renames the group, and undoes both', () => {
    const opened = state().doc
    act(() => {
      state().select({ nodeIds: [nodeId('Words 1'), nodeId('Words 2')] })
    })
    pressShortcut('editor.group')

    const frame = screen.getByTestId('group-Group')
    expect(frame.textContent).toContain('2 nodes')
    const panel = screen.getByTestId('group-inspector')
    expect(panel.textContent).toContain('Words 1, Words 2')

    fireEvent.change(within(panel).getByRole('textbox', { name: 'Group label' }), {
      target: { value: 'Harbour lights' },
    })
    expect(screen.getByTestId('group-Harbour lights')).toBeTruthy()
    expect(screen.queryByTestId('group-Group')).toBeNull()

    pressShortcut('editor.undo')
    expect(screen.getByTestId('group-Group')).toBeTruthy()
    pressShortcut('editor.undo')
    expect(screen.queryByTestId('group-Group')).toBeNull()
    expect(state().doc).toBe(opened)
  })

  it('saves the group with the flow file, and ungroups by the key', async () => {
    act(() => {
      state().select({ nodeIds: [nodeId('Words 2'), nodeId('Inked sketch')] })
    })
    act(() => {
      fireEvent.click(
        within(screen.getByRole('region', { name: 'Selected nodes' })).getByRole('button', {
          name: 'Group',
        }),
      )
    })
    await act(async () => {
      await state().flushSave()
    })
    const saved = main.callsTo('flows.save').at(-1) as { flow: FileFlow }
    expect(saved.flow.context_variables?.[GROUPS_KEY]).toEqual([
      {
        id: state().selection.groupIds[0],
        label: 'Group',
        node_ids: [nodeId('Words 2'), nodeId('Inked sketch')],
      },
    ])
    // The file reads back with its group.
    expect(flowFileToDoc(saved.flow).flow.context_variables).toEqual(saved.flow.context_variables)

    pressShortcut('editor.ungroup')
    expect(screen.queryByTestId('group-Group')).toBeNull()
    await act(async () => {
      await state().flushSave()
    })
    const after = main.callsTo('flows.save').at(-1) as { flow: FileFlow }
    expect(after.flow.context_variables?.[GROUPS_KEY]).toBeUndefined()
  })

  it('keeps a node in one group, and drops a group whose nodes are all deleted', () => {
    act(() => {
      state().select({ nodeIds: [nodeId('Words 1'), nodeId('Words 2')] })
    })
    pressShortcut('editor.group')
    act(() => {
      state().select({ nodeIds: [nodeId('Words 2')], groupIds: [] })
    })
    pressShortcut('editor.group')
    expect(screen.getByTestId('group-Group').textContent).toContain('1 node')
    expect(screen.getByTestId('group-Group 2').textContent).toContain('1 node')

    act(() => {
      state().select({ nodeIds: [nodeId('Words 2')], groupIds: [] })
    })
    pressShortcut('editor.delete')
    expect(screen.queryByTestId('group-Group 2')).toBeNull()
    expect(screen.getByTestId('group-Group')).toBeTruthy()
    // Gone from the file too, not only from the canvas.
    expect(groupsOf(state().doc ?? flowFileToDoc({ id: FLOW, name: 'x' }))).toEqual([
      { id: expect.any(String) as string, label: 'Group', node_ids: [nodeId('Words 1')] },
    ])
  })
})

describe('a sub-flow node in a run', () => {
  const send = (event: FlowRunEvent) => {
    act(() => {
      main.emit('flowRuns.event', { flowRunId: RUN, event })
    })
  }

  it('sums up its inner nodes on the canvas and lists them in the inspector', async () => {
    started = () => Promise.resolve({ ok: true, value: { flowRunId: RUN } })
    await act(async () => {
      await state().startRun()
    })
    const sub = nodeId('Inked sketch')
    const base = { flowRunId: RUN, attempt: 1 }
    send({ type: 'node-running', nodeId: sub, ...base })
    send({ type: 'node-running', nodeId: `${sub}/${u(21)}`, ...base })
    const node = screen.getByTestId('node-Inked sketch')
    expect(within(node).getByTestId('sub-flow-progress').textContent).toBe('0/2 done · 1 running')

    send({ type: 'node-succeeded', nodeId: `${sub}/${u(21)}`, outputs: {}, costMicro: 0, ...base })
    send({
      type: 'node-failed',
      nodeId: `${sub}/${u(22)}`,
      error: { code: 'MODEL_FAILED', message: 'The ink model gave up.' },
      ...base,
    })
    expect(within(node).getByTestId('sub-flow-progress').textContent).toBe('1/2 done · 1 failed')

    await act(async () => {
      state().select({ nodeIds: [sub] })
      await Promise.resolve()
    })
    const inner = await screen.findByTestId('sub-flow-states')
    expect(within(inner).getByTestId('inner-Sketch').textContent).toContain('Done')
    expect(within(inner).getByTestId('inner-Ink').textContent).toContain('Failed')
    expect(within(inner).getByTestId('inner-Ink').textContent).toContain('The ink model gave up.')
  })
})

describe('a node in a run', () => {
  const send = (event: FlowRunEvent) => {
    act(() => {
      main.emit('flowRuns.event', { flowRunId: RUN, event })
    })
  }

  it('shows its words clamped on the canvas, and its latest log lines in the inspector', async () => {
    started = () => Promise.resolve({ ok: true, value: { flowRunId: RUN } })
    await act(async () => {
      await state().startRun()
    })
    const words = nodeId('Words 1')
    const base = { flowRunId: RUN, nodeId: words, attempt: 1 }
    send({ type: 'node-running', ...base })
    // A progress message told twice is one line.
    send({ type: 'node-progress', fraction: 0.1, message: 'warming up', ...base })
    send({ type: 'node-progress', fraction: 0.2, message: 'warming up', ...base })
    for (let line = 1; line <= 60; line++) {
      send({
        type: 'node-log',
        level: line === 60 ? 'warning' : 'info',
        message: `line ${line}`,
        ...base,
      })
    }
    const caption = `A brass astrolabe on dark velvet, ${'lit from the left, '.repeat(30)}close up.`
    send({ type: 'node-succeeded', outputs: { text: caption }, costMicro: 0, ...base })
    // Words 2 made blank words and an id: no port of its names the id, blank is not words.
    send({
      type: 'node-succeeded',
      outputs: { text: '  ', evaluation_id: u(99) },
      costMicro: 0,
      ...base,
      nodeId: nodeId('Words 2'),
    })

    const node = screen.getByTestId('node-Words 1')
    // The last line on the node.
    expect(within(node).getByTestId('node-log').textContent).toBe('line 60')
    const preview = within(node).getByTestId('node-text')
    expect(preview.getAttribute('aria-label')).toBe('text of Words 1')
    expect(preview.textContent.startsWith('A brass astrolabe on dark velvet, lit')).toBe(true)
    expect(preview.textContent.endsWith('…')).toBe(true)
    expect(preview.textContent.length).toBeLessThanOrEqual(280)
    expect(preview.getAttribute('title')).toBe(caption)
    expect(within(screen.getByTestId('node-Words 2')).queryByTestId('node-text')).toBeNull()

    await act(async () => {
      state().select({ nodeIds: [words] })
      await Promise.resolve()
    })
    const inspector = screen.getByTestId('node-inspector')
    expect(within(inspector).getByTestId('output-text-text').textContent).toContain(caption)
    const lines = within(within(inspector).getByTestId('node-log-lines')).getAllByRole('listitem')
    // The latest 50 of 61 lines, oldest first: "warming up" and lines 1 to 10 are let go.
    expect(lines).toHaveLength(50)
    expect(lines[0]?.textContent).toBe('info line 11')
    expect(lines[49]?.textContent).toBe('warning line 60')
    expect(lines[49]?.dataset.level).toBe('warning')
    expect(within(inspector).getByText('The latest 50 lines.')).toBeTruthy()
  })
})

describe('a refused run', () => {
  it('names the node and input of each problem, and shows the node', async () => {
    const message = 'Input "text" of node "Words 2" is required; connect it or give it a value.'
    started = () =>
      Promise.resolve({
        ok: false,
        error: {
          code: 'FLOW_INVALID',
          message: 'The flow cannot run: 1 problem(s) to fix first.',
          issues: [{ path: 'nodes.1.inputs.0', message }],
        },
      })
    // The second node gets the input the problem is about.
    act(() => {
      state().editDoc((doc) => ({
        ...doc,
        nodes: doc.nodes.map((node, i) =>
          i === 1
            ? {
                ...node,
                data: {
                  record: {
                    ...node.data.record,
                    inputs: [
                      {
                        id: u(40),
                        name: 'text',
                        display_name: 'Caption',
                        variable_type_code: 'text',
                        is_required: true,
                      },
                    ],
                  },
                },
              }
            : node,
        ),
      }))
    })
    await act(async () => {
      fireEvent.click(screen.getByTestId('run-button'))
      await Promise.resolve()
    })
    const banner = await screen.findByTestId('run-problem')
    const [issue] = within(banner).getAllByTestId('run-issue')
    expect(issue?.querySelector('strong')?.textContent).toBe('Words 2 · Caption')
    expect(issue?.textContent).toContain(message)

    act(() => {
      fireEvent.click(within(banner).getByRole('button', { name: 'Show the node' }))
    })
    expect(state().selection.nodeIds).toEqual([nodeId('Words 2')])
    expect(screen.getByTestId('node-inspector').getAttribute('aria-label')).toBe('Node Words 2')
  })
})

describe('retry edges', () => {
  it('are edges of their own, marked and named; deleting one keeps the input fed', async () => {
    const gate = storedFlow(u(3), 'Gate')
    const file = gate.flow as FileFlow
    const [first, second] = file.nodes ?? []
    const fed = first?.outputs?.[0]?.id ?? null
    const retried = second?.outputs?.[0]?.id ?? null
    if (!first || !second) throw new Error('The flow has two nodes.')
    second.inputs = [
      {
        id: u(50),
        name: 'text',
        variable_type_code: 'text',
        source_output_id: fed,
        retry_source_output_id: retried,
      },
    ]
    main.flows.set(gate.id, gate)
    await act(async () => {
      await state().openFlow(gate.id)
    })
    const edges = edgesOf(state().doc?.nodes ?? [])
    expect(edges.map((edge) => [edge.source, edge.target, edge.label, edge.data?.retry])).toEqual([
      [first.id, second.id, undefined, undefined],
      [second.id, second.id, RETRY_LABEL, true],
    ])

    act(() => {
      state().select({ edgeIds: [retryEdgeId(u(50))] })
    })
    pressShortcut('editor.delete')
    const input = state().doc?.nodes[1]?.data.record.inputs?.[0]
    expect(input).toMatchObject({ source_output_id: fed, retry_source_output_id: null })
    pressShortcut('editor.undo')
    expect(state().doc?.nodes[1]?.data.record.inputs?.[0]).toMatchObject({
      retry_source_output_id: retried,
    })
  })
})
