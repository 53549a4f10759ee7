// @vitest-environment happy-dom
import { act, fireEvent, render, screen, within } from '@testing-library/react'
import { createElement } from 'react'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import type { FlowVersion, StoredFlow } from '../../src-shared/domain/flow-editor'
import type { IpcResult } from '../../src-shared/ipc/result'
import type { FileFlow } from '../../src-renderer/src/flows/document'
import { FlowsPage } from '../../src-renderer/src/flows'
import { useAppStore } from '../../src-renderer/src/store'
import { idle, settled, ShellMain, storedFlow, u } from './shell-transport'
import { installApi, removeApi } from './harness'

/**
 * The flow editor's toolbar as a person uses it: the Run form that asks for the flow's inputs
 * before a run (and "Run to here", "Force re-run" from the inspector), and the Versions panel.
 * Main is the transport's double, keeping the flow, its saves and its versions in memory as the
 * flow library does (src-main/flows/library.ts); the store and the components are the app's own.
 */

const FLOW = u(1)
const PLAIN = u(2)
const RUN = 'flow-run-1'

/** A local flow of two text nodes with two inputs: a required prompt and steps with a default. */
function withInputs(): StoredFlow {
  const stored = storedFlow(FLOW, 'Harbour at dusk')
  ;(stored.flow as FileFlow).inputs = [
    {
      id: u(70),
      name: 'prompt',
      display_name: 'Prompt',
      variable_type_code: 'text',
      is_required: true,
      description: 'What the picture shows.',
    },
    {
      id: u(71),
      name: 'steps',
      display_name: 'Steps',
      variable_type_code: 'integer',
      default_value: 20,
      validator_code: 'range',
      validator_attrs: { min: 1, max: 50 },
    },
  ]
  return stored
}

interface Kept extends FlowVersion {
  flow: Record<string, unknown>
}

class EditorMain extends ShellMain {
  readonly versions = new Map<string, Kept[]>()
  private createdMs = Date.parse('2026-03-01T10:00:00Z')

  constructor() {
    super([withInputs(), storedFlow(PLAIN, 'No inputs')])
    const known = (id: string) => {
      const found = this.flows.get(id)
      if (!found) throw new Error(`no flow ${id} in this test`)
      return found
    }
    const keep = (id: string, name: string, flow: Record<string, unknown>): FlowVersion => {
      const kept = this.versions.get(id) ?? []
      const version = { version: kept.length + 1, name, createdMs: (this.createdMs += 60_000) }
      this.versions.set(id, [{ ...version, flow: structuredClone(flow) }, ...kept])
      return version
    }
    const stored = (id: string): StoredFlow => ({
      ...structuredClone(known(id)),
      versions: (this.versions.get(id) ?? []).map(({ flow: _flow, ...version }) => version),
    })
    Object.assign(this.api.flows, {
      get: (args: { id: string }) => {
        this.calls.push({ channel: 'flows.get', args })
        return ok(stored(args.id))
      },
      save: (args: { id: string; flow: Record<string, unknown> }) => {
        this.calls.push({ channel: 'flows.save', args })
        const updatedMs = known(args.id).updatedMs + 1
        this.flows.set(args.id, { ...known(args.id), flow: structuredClone(args.flow), updatedMs })
        return ok({ updatedMs })
      },
      saveVersion: (args: { id: string; name: string }) => {
        this.calls.push({ channel: 'flows.saveVersion', args })
        return ok(keep(args.id, args.name, known(args.id).flow))
      },
      restoreVersion: (args: { id: string; version: number }) => {
        this.calls.push({ channel: 'flows.restoreVersion', args })
        const kept = this.versions.get(args.id)?.find((v) => v.version === args.version)
        if (!kept) throw new Error(`no version ${String(args.version)} in this test`)
        // What was current is kept first, so the restore can itself be undone from the list.
        keep(args.id, `Before restoring “${kept.name}”`, known(args.id).flow)
        this.flows.set(args.id, { ...known(args.id), flow: structuredClone(kept.flow) })
        return ok(stored(args.id))
      },
    })
    this.api.flowRuns = {
      start: (args) => {
        this.calls.push({ channel: 'flowRuns.start', args })
        return ok({ flowRunId: RUN })
      },
      cancel: () => ok(null),
      resume: (args) => {
        this.calls.push({ channel: 'flowRuns.resume', args })
        return ok({ flowRunId: args.flowRunId })
      },
    }
  }

  channels(): string[] {
    return this.calls.map((call) => call.channel)
  }
}

const ok = <T>(value: T): Promise<IpcResult<T>> => Promise.resolve({ ok: true, value })

let main: EditorMain

beforeEach(() => {
  main = new EditorMain()
  installApi(main.api)
})

afterEach(async () => {
  await act(async () => {
    await useAppStore.getState().closeFlow()
  })
  removeApi()
})

async function open(id = FLOW) {
  render(createElement(FlowsPage))
  await act(async () => {
    await useAppStore.getState().openFlow(id)
  })
  // The editor's code comes in a chunk of its own: it is open once its toolbar shows.
  await screen.findByRole('toolbar', { name: 'Flow editor' }, { timeout: 10_000 })
}

const state = () => useAppStore.getState()
const nodeId = (label: string) =>
  state().doc?.nodes.find((node) => node.data.record.label === label)?.id ?? ''
const runForm = (title: string) => screen.getByRole('dialog', { name: title })

/** The run's last event: the toolbar offers Run again. */
function finish() {
  act(() => {
    main.emit('flowRuns.event', {
      flowRunId: RUN,
      event: {
        type: 'flow-finished',
        flowRunId: RUN,
        state: 'succeeded',
        outputs: {},
        totals: {
          nodes: 2,
          dispatched: 0,
          cached: 0,
          skipped: 0,
          failed: 0,
          canceled: 0,
          estimateMicro: 0,
          costMicro: 0,
        },
      },
    })
  })
}

function type(field: HTMLElement, value: string) {
  act(() => {
    fireEvent.change(field, { target: { value } })
  })
}

describe('the run form', () => {
  it("asks for the flow's inputs, starts the run with what was filled in, and remembers it", async () => {
    await open()
    await settled(() => {
      fireEvent.click(screen.getByRole('button', { name: 'Run' }))
    })
    // Nothing starts before the form is sent.
    expect(main.callsTo('flowRuns.start')).toEqual([])
    const form = within(runForm('Run the flow'))
    expect(form.getByRole('heading', { name: 'Run the flow' })).toBeTruthy()
    const prompt = within(form.getByTestId('run-input-prompt'))
    expect(prompt.getByLabelText('required')).toBeTruthy()
    expect(prompt.getByText('What the picture shows.')).toBeTruthy()
    const steps = form.getByRole<HTMLInputElement>('spinbutton', { name: 'Steps' })
    expect(steps.placeholder).toBe('Default: 20')
    expect(steps.value).toBe('')

    type(form.getByRole('textbox', { name: 'Prompt' }), 'a lighthouse in fog')
    await settled(() => {
      fireEvent.click(form.getByRole('button', { name: 'Start the run' }))
    })
    // Steps was left empty: it is left out, so the flow input's own default applies.
    expect(main.callsTo('flowRuns.start')).toEqual([
      {
        flow: expect.objectContaining({
          id: FLOW,
          inputs: expect.arrayContaining([expect.objectContaining({ name: 'prompt' })]),
        }) as unknown,
        inputs: { prompt: 'a lighthouse in fog' },
        force: [],
      },
    ])
    expect(screen.queryByRole('dialog')).toBeNull()
    expect(screen.getByRole('button', { name: 'Cancel run' })).toBeTruthy()

    // The next run's form starts from what the last run was given.
    finish()
    expect(screen.getByTestId('run-result').textContent).toContain('Run succeeded')
    await settled(() => {
      fireEvent.click(screen.getByRole('button', { name: 'Run' }))
    })
    const again = within(runForm('Run the flow'))
    expect(again.getByRole<HTMLTextAreaElement>('textbox', { name: 'Prompt' }).value).toBe(
      'a lighthouse in fog',
    )
    type(again.getByRole('spinbutton', { name: 'Steps' }), '30')
    type(again.getByRole('textbox', { name: 'Prompt' }), 'a harbour at night')
    // Cancel starts nothing and forgets what was typed.
    fireEvent.click(again.getByRole('button', { name: 'Cancel' }))
    expect(screen.queryByRole('dialog')).toBeNull()
    expect(main.callsTo('flowRuns.start')).toHaveLength(1)

    await settled(() => {
      fireEvent.click(screen.getByRole('button', { name: 'Run' }))
    })
    const third = within(runForm('Run the flow'))
    expect(third.getByRole<HTMLTextAreaElement>('textbox', { name: 'Prompt' }).value).toBe(
      'a lighthouse in fog',
    )
    type(third.getByRole('spinbutton', { name: 'Steps' }), '30')
    await settled(() => {
      fireEvent.click(third.getByRole('button', { name: 'Start the run' }))
    })
    expect(main.callsTo('flowRuns.start').at(-1)).toMatchObject({
      inputs: { prompt: 'a lighthouse in fog', steps: 30 },
      force: [],
    })
  })

  it('asks the same for "Run to here" and "Force re-run", and runs only or again that node', async () => {
    await open()
    const words = nodeId('Words 2')
    await settled(() => {
      state().select({ nodeIds: [words] })
    })
    await settled(() => {
      fireEvent.click(screen.getByRole('button', { name: 'Run to here' }))
    })
    const toHere = within(runForm('Run to here'))
    type(toHere.getByRole('textbox', { name: 'Prompt' }), 'a lighthouse in fog')
    await settled(() => {
      fireEvent.click(toHere.getByRole('button', { name: 'Start the run' }))
    })
    expect(main.callsTo('flowRuns.start').at(-1)).toMatchObject({
      inputs: { prompt: 'a lighthouse in fog' },
      only: [words],
      force: [],
    })

    finish()
    await settled(() => {
      fireEvent.click(screen.getByRole('button', { name: 'Force re-run' }))
    })
    await settled(() => {
      fireEvent.click(
        within(runForm('Force re-run')).getByRole('button', { name: 'Start the run' }),
      )
    })
    const forced = main.callsTo('flowRuns.start').at(-1)
    expect(forced).toMatchObject({ inputs: { prompt: 'a lighthouse in fog' }, force: [words] })
    expect(forced).not.toHaveProperty('only')
  })

  it('starts a flow without inputs at once, with no form to fill', async () => {
    await open(PLAIN)
    await settled(() => {
      fireEvent.click(screen.getByRole('button', { name: 'Run' }))
    })
    expect(screen.queryByRole('dialog')).toBeNull()
    expect(main.callsTo('flowRuns.start')).toEqual([
      { flow: expect.objectContaining({ id: PLAIN }) as unknown, inputs: {}, force: [] },
    ])
  })
})

describe('the versions panel', () => {
  const panel = () =>
    within(screen.getByText(/^Versions \(\d+\)$/).closest('details') as HTMLElement)

  async function rename(from: string, to: string) {
    await settled(() => {
      state().select({ nodeIds: [nodeId(from)] })
    })
    type(within(screen.getByTestId('node-inspector')).getByRole('textbox', { name: 'Label' }), to)
  }

  it('keeps a named version of the flow as it is now, edits saved first', async () => {
    await open()
    fireEvent.click(screen.getByText('Versions (0)'))
    expect(panel().getByText(/No versions yet/)).toBeTruthy()
    const name = panel().getByRole<HTMLInputElement>('textbox', { name: 'Version name' })
    const save = panel().getByRole<HTMLButtonElement>('button', { name: 'Save version' })
    // A blank name cannot be saved.
    type(name, '   ')
    expect(save.disabled).toBe(true)

    await rename('Words 1', 'Lantern')
    type(name, ' Lantern lit ')
    await settled(() => {
      fireEvent.click(save)
    })
    // The edit not yet saved went first: the version holds it.
    expect(main.channels().filter((c) => c.startsWith('flows.save'))).toEqual([
      'flows.save',
      'flows.saveVersion',
    ])
    expect(main.callsTo('flows.saveVersion')).toEqual([{ id: FLOW, name: 'Lantern lit' }])
    const labels = (main.versions.get(FLOW)?.[0]?.flow as FileFlow).nodes?.map((n) => n.label)
    expect(labels).toEqual(['Lantern', 'Words 2'])
    expect(screen.getByText('Versions (1)')).toBeTruthy()
    expect(within(panel().getByTestId('version-1')).getByText('Lantern lit')).toBeTruthy()
    expect(name.value).toBe('')
  })

  it('restores a version over the current flow, keeping the current one as a version first', async () => {
    await open()
    fireEvent.click(screen.getByText('Versions (0)'))
    await rename('Words 1', 'Lantern')
    type(panel().getByRole('textbox', { name: 'Version name' }), 'Lantern lit')
    await settled(() => {
      fireEvent.click(panel().getByRole('button', { name: 'Save version' }))
    })
    await rename('Lantern', 'Fog horn')
    expect(screen.getByTestId('node-Fog horn')).toBeTruthy()

    await settled(() => {
      fireEvent.click(
        within(panel().getByTestId('version-1')).getByRole('button', { name: 'Restore' }),
      )
    })
    // The edit after the version was saved before the restore, so it is not lost.
    expect(
      main.channels().filter((c) => c.startsWith('flows.save') || c.startsWith('flows.restore')),
    ).toEqual(['flows.save', 'flows.saveVersion', 'flows.save', 'flows.restoreVersion'])
    expect(main.callsTo('flows.restoreVersion')).toEqual([{ id: FLOW, version: 1 }])
    expect(screen.getByTestId('node-Lantern')).toBeTruthy()
    expect(screen.queryByTestId('node-Fog horn')).toBeNull()
    expect(screen.getByText('Versions (2)')).toBeTruthy()
    const kept = panel().getByTestId('version-2')
    expect(kept.textContent).toContain('Before restoring “Lantern lit”')
    // A restore is not an edit to undo: going back is restoring the version kept before it.
    expect(screen.getByRole<HTMLButtonElement>('button', { name: 'Undo' }).disabled).toBe(true)
    await settled(() => {
      fireEvent.click(within(kept).getByRole('button', { name: 'Restore' }))
    })
    expect(screen.getByTestId('node-Fog horn')).toBeTruthy()
  })

  it('reads the palette again when a sync has ended since, so models synced later are offered', async () => {
    useAppStore.setState({ sync: idle(null) })
    await open()
    await settled(() => {
      expect(main.callsTo('flows.palette')).toHaveLength(1)
    })
    // The first sync of a new profile ends after the editor opened.
    act(() => {
      useAppStore.setState({ sync: { ...idle(null), lastOkAt: 2_000 } })
    })
    await settled(() => {
      expect(main.callsTo('flows.palette')).toHaveLength(2)
    })
    // A status that says nothing new reads nothing.
    act(() => {
      useAppStore.setState({ sync: { ...idle(null), lastOkAt: 2_000, nextAt: 9_000 } })
    })
    expect(main.callsTo('flows.palette')).toHaveLength(2)
  })
})
