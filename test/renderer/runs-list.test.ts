// @vitest-environment happy-dom
import { act, fireEvent, render, screen, waitFor, within } from '@testing-library/react'
import { createElement } from 'react'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import type { RunStatusCode } from '../../src-shared/api'
import type {
  RunFilterOptions,
  RunListPage,
  RunListQueryInput,
  RunListRow,
} from '../../src-shared/domain/runs-list'
import type { AtelierApi } from '../../src-shared/ipc/api'
import type { IpcResult } from '../../src-shared/ipc/result'
import { App } from '../../src-renderer/src/shell/App'
import { useAppStore } from '../../src-renderer/src/store'
import { idle, settled, ShellMain, summary, u } from './shell-transport'
import { installApi, removeApi, sizeScrollAreas, unsizeScrollAreas } from './harness'

/**
 * The Runs section as a person uses it, in the app's own shell, store and components; only the
 * IPC transport is doubled (`RunsMain` answers `runs.*` from rows in memory, filtering and
 * paging as the mirror does).
 */

const NOW = Date.UTC(2026, 2, 1, 12)
const STATUSES: RunStatusCode[] = ['succeeded', 'failed', 'running', 'succeeded', 'canceled']

function row(n: number, over: Partial<RunListRow> = {}): RunListRow {
  const status = STATUSES[n % STATUSES.length] ?? 'succeeded'
  return {
    id: u(1000 + n),
    status,
    target: 'model',
    name: 'Atelier Text to Image',
    model: 'atelier/text-to-image',
    flowId: null,
    createdMs: NOW - n * 60_000,
    durationMs: 1200 + n,
    cost: '0.0200',
    text: `a harbour study ${String(n)}`,
    hasOutputs: status === 'succeeded',
    failure: status === 'failed' ? 'The model ran out of memory.' : null,
    ...over,
  }
}

class RunsMain {
  rows: RunListRow[] = []
  readonly queries: RunListQueryInput[] = []
  options: RunFilterOptions = {
    models: [{ slug: 'atelier/text-to-image', name: 'Atelier Text to Image' }],
    flows: [],
  }

  readonly api: Pick<AtelierApi['runs'], 'list' | 'filterOptions'> = {
    list: (query) => {
      this.queries.push(query)
      const words = (query.text ?? '').trim().toLowerCase()
      const statuses = query.statuses ?? []
      const matching = this.rows.filter(
        (r) =>
          (words === '' || (r.text ?? '').toLowerCase().includes(words)) &&
          (statuses.length === 0 || statuses.includes(r.status)) &&
          (query.model === undefined || r.model === query.model),
      )
      const start = query.cursor ? Number(query.cursor) : 0
      const limit = query.limit ?? 100
      const items = matching.slice(start, start + limit)
      const page: RunListPage = {
        items,
        next: start + limit < matching.length ? String(start + limit) : null,
        total: query.cursor ? null : { count: matching.length, more: false },
      }
      return Promise.resolve<IpcResult<RunListPage>>({ ok: true, value: structuredClone(page) })
    },
    filterOptions: () => Promise.resolve({ ok: true, value: structuredClone(this.options) }),
  }
}

let main: ShellMain
let runs: RunsMain

beforeEach(() => {
  sizeScrollAreas(['runs-scroll'])
  localStorage.clear()
  main = new ShellMain()
  runs = new RunsMain()
  installApi({ ...main.api, runs: { ...main.api.runs, ...runs.api } })
})

afterEach(() => {
  unsizeScrollAreas()
  removeApi()
})

async function openRuns() {
  render(createElement(App))
  await settled(() => {
    useAppStore.getState().goTo('runs')
  })
  await act(async () => {})
  // The section's code comes in a chunk of its own: it is there once its filters show.
  await screen.findByRole('search', { name: 'Filter runs' }, { timeout: 10_000 })
  // The filters show before the first page is in: on a busy machine the list comes later.
  await waitFor(() => {
    expect(useAppStore.getState().runRows).not.toBeNull()
  })
  await act(async () => {})
}

const grid = () => screen.getByRole('grid', { name: 'Runs' })
const shownRows = () =>
  within(grid())
    .getAllByRole('row')
    .filter((r) => r.dataset.runId !== undefined)
const state = () => useAppStore.getState()
/** The section's own: the sidebar has a status and an offline line of its own. */
const section = () => within(screen.getByRole('main'))

describe('the runs list', () => {
  it('shows the synced runs newest first, with status, what ran, duration, cost and outputs', async () => {
    runs.rows = [0, 1, 2].map((n) => row(n))
    await openRuns()
    expect(screen.getByText('3 runs')).toBeTruthy()
    const [first, second] = shownRows()
    expect(first?.textContent).toContain('Succeeded')
    expect(first?.textContent).toContain('a harbour study 0')
    expect(first?.textContent).toContain('Atelier Text to Image')
    expect(first?.textContent).toContain('1.2 s')
    expect(first?.textContent).toContain('0.0200')
    expect(within(first as HTMLElement).queryByRole('img', { name: 'Has outputs' })).not.toBeNull()
    // A failed run says why, and made nothing.
    expect(second?.textContent).toContain('Failed')
    expect(second?.textContent).toContain('The model ran out of memory.')
    expect(within(second as HTMLElement).queryByRole('img', { name: 'Has outputs' })).toBeNull()
    expect(grid().getAttribute('aria-rowcount')).toBe('4')
  })

  it('says there are no runs yet, and that nothing matches once filtered, with a way back', async () => {
    await openRuns()
    expect(section().getByRole('status').textContent).toContain('No runs yet')
    runs.rows = [row(0)]
    await settled(() => {
      fireEvent.click(screen.getByRole('button', { name: 'Canceled' }))
    })
    expect(section().getByRole('status').textContent).toContain('No runs match')
    await settled(() => {
      fireEvent.click(
        within(section().getByRole('status')).getByRole('button', { name: 'Clear filters' }),
      )
    })
    expect(shownRows()).toHaveLength(1)
    expect(runs.queries.at(-1)?.statuses).toEqual([])
  })

  it('filters by status and model, asking the mirror for each new list', async () => {
    runs.rows = [0, 1, 2, 3, 4, 5].map((n) => row(n))
    await openRuns()
    await settled(() => {
      fireEvent.click(screen.getByRole('button', { name: 'Failed' }))
    })
    expect(runs.queries.at(-1)?.statuses).toEqual(['failed'])
    expect(screen.getByRole('button', { name: 'Failed' }).getAttribute('aria-pressed')).toBe('true')
    expect(shownRows().map((r) => r.dataset.runId)).toEqual([u(1001)])
    await settled(() => {
      fireEvent.click(screen.getByRole('button', { name: 'Succeeded' }))
    })
    expect(runs.queries.at(-1)?.statuses).toEqual(['failed', 'succeeded'])
    expect(shownRows()).toHaveLength(4)
    await settled(() => {
      fireEvent.change(screen.getByRole('combobox', { name: 'Model' }), {
        target: { value: 'atelier/text-to-image' },
      })
    })
    expect(runs.queries.at(-1)?.model).toBe('atelier/text-to-image')
    // A bound that is not an amount of credits is marked and never sent.
    const min = screen.getByRole('textbox', { name: 'Cost at least (credits)' })
    const asked = runs.queries.length
    await settled(() => {
      fireEvent.change(min, { target: { value: 'cheap' } })
      fireEvent.blur(min)
    })
    expect(min.getAttribute('aria-invalid')).toBe('true')
    expect(runs.queries).toHaveLength(asked)
    await settled(() => {
      fireEvent.change(min, { target: { value: '0.01' } })
      fireEvent.blur(min)
    })
    expect(runs.queries.at(-1)?.minCost).toBe('0.01')
  })

  it('searches once typing pauses, and Ctrl+F puts the cursor in the search field', async () => {
    runs.rows = [row(0, { text: 'a lighthouse in fog' }), row(1), row(2)]
    await openRuns()
    const search = screen.getByRole('searchbox', { name: 'Search runs' })
    act(() => {
      fireEvent.keyDown(window, { key: 'f', ctrlKey: true })
    })
    expect(document.activeElement).toBe(search)
    const asked = runs.queries.length
    act(() => {
      for (const text of ['l', 'li', 'lig', 'light'])
        fireEvent.change(search, { target: { value: text } })
    })
    // Nothing asked per key…
    expect(runs.queries).toHaveLength(asked)
    // …one query once the typing pauses.
    await waitFor(() => {
      expect(shownRows()).toHaveLength(1)
    })
    expect(runs.queries.slice(asked).map((q) => q.text)).toEqual(['light'])
    expect(screen.getByText('1 run')).toBeTruthy()
  })

  it('loads the next page by its cursor as the end of the list comes near', async () => {
    runs.rows = Array.from({ length: 130 }, (_, n) => row(n))
    await openRuns()
    // The first page fills the view with rows to spare: nothing more is asked yet.
    expect(state().runRows).toHaveLength(100)
    expect(runs.queries).toHaveLength(1)
    const scroll = screen.getByTestId('runs-scroll')
    await settled(() => {
      scroll.scrollTop = 60 * 40
      fireEvent.scroll(scroll)
    })
    await waitFor(() => {
      expect(state().runRows).toHaveLength(130)
    })
    expect(runs.queries.map((q) => q.cursor ?? null)).toEqual([null, '100'])
    expect(new Set(state().runRows?.map((r) => r.id)).size).toBe(130)
  })

  it('moves with ↑/↓ and opens the active run with Enter', async () => {
    runs.rows = [0, 1, 2].map((n) => row(n))
    await openRuns()
    const list = grid()
    list.focus()
    for (const key of ['ArrowDown', 'ArrowDown', 'ArrowUp']) {
      act(() => {
        fireEvent.keyDown(list, { key })
      })
    }
    expect(list.getAttribute('aria-activedescendant')).toBe(`run-row-${u(1001)}`)
    await settled(() => {
      fireEvent.keyDown(list, { key: 'Enter' })
    })
    expect(state().selectedRunId).toBe(u(1001))
    // The page takes the list's place; the list waits underneath, as it was.
    expect(document.querySelector('.runs-list')?.hasAttribute('hidden')).toBe(true)
    await settled(() => {
      state().closeRun()
    })
    expect(document.querySelector('.runs-list')?.hasAttribute('hidden')).toBe(false)
    expect(grid().getAttribute('aria-activedescendant')).toBe(`run-row-${u(1001)}`)
  })

  it('compares two runs ticked with Ctrl+click or their boxes', async () => {
    runs.rows = [0, 1, 2].map((n) => row(n))
    await openRuns()
    const compare = screen.getByRole('button', { name: 'Compare' })
    expect(compare.hasAttribute('disabled')).toBe(true)
    const [first, , third] = shownRows()
    act(() => {
      fireEvent.click(first as HTMLElement, { ctrlKey: true })
    })
    expect(state().selectedRunId).toBeNull()
    expect(screen.getByText('Tick one more run to compare')).toBeTruthy()
    act(() => {
      fireEvent.click(within(third as HTMLElement).getByRole('checkbox'))
    })
    expect(state().checkedRunIds).toEqual([u(1000), u(1002)])
    expect(compare.hasAttribute('disabled')).toBe(false)
    await settled(() => {
      fireEvent.click(compare)
    })
    expect(state().compareRunIds).toEqual([u(1000), u(1002)])
  })

  it('merges what a sync brought on top, and says when it shows only what was synced', async () => {
    runs.rows = [1, 2].map((n) => row(n))
    await openRuns()
    expect(section().queryByText('Offline — showing what was synced')).toBeNull()
    runs.rows = [row(0), row(1, { status: 'succeeded', failure: null }), row(2)]
    await settled(() => {
      main.emit('sync.status', idle(summary({ finishedAt: 5_000, fetched: 2 })))
    })
    await waitFor(() => {
      expect(shownRows().map((r) => r.dataset.runId)).toEqual([u(1000), u(1001), u(1002)])
    })
    expect(shownRows()[1]?.textContent).toContain('Succeeded')
    await settled(() => {
      main.emit('sync.status', {
        ...idle(summary({ outcome: 'offline', finishedAt: 6_000 })),
        state: 'offline',
      })
    })
    expect(section().getByText('Offline — showing what was synced')).toBeTruthy()
  })
})
