// @vitest-environment happy-dom
import { act, cleanup, fireEvent, render, screen, within } from '@testing-library/react'
import { createElement } from 'react'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import type { SearchResultItem } from '../../src-shared/domain/search'
import { App } from '../../src-renderer/src/shell/App'
import { useAppStore } from '../../src-renderer/src/store'
import { settled, ShellMain, storedFlow, u } from './shell-transport'

let main: ShellMain

const run: SearchResultItem = {
  kind: 'run',
  id: u(501),
  orgId: u(77),
  createdAt: '2026-03-01T09:30:00Z',
  title: 'a brass astrolabe on velvet',
  matchedIn: 'prompt',
  snippet: null,
  score: 3,
  status: 'succeeded',
  model: 'atelier/text-to-image',
  cost: '0.0200',
}

const asset: SearchResultItem = {
  kind: 'asset',
  id: u(502),
  orgId: u(77),
  createdAt: '2026-03-01T09:30:00Z',
  title: 'astrolabe-study.png',
  matchedIn: 'name',
  snippet: null,
  score: 2,
  mediaType: 'image',
  folderPath: '/Studies',
  sizeBytes: 2048,
}

const evaluation: SearchResultItem = {
  kind: 'evaluation',
  id: u(503),
  orgId: u(77),
  createdAt: '2026-03-01T09:30:00Z',
  title: 'the astrolabe, judged',
  matchedIn: 'prompt',
  snippet: null,
  score: 1,
  status: 'completed',
  verdict: 'passed',
  feedback: 'none',
  passRate: 0.9,
  runId: u(501),
}

beforeEach(async () => {
  localStorage.clear()
  main = new ShellMain([
    storedFlow(u(1), 'Harbour at dusk', 3_000),
    storedFlow(u(2), 'Portrait in oils', 2_000),
  ])
  main.searchItems = [run, asset, evaluation]
  window.atelier = main.api
  useAppStore.setState(useAppStore.getInitialState(), true)
  render(createElement(App))
  await act(async () => {})
})

afterEach(() => {
  cleanup()
  useAppStore.setState(useAppStore.getInitialState(), true)
  delete window.atelier
})

const press = (target: Element | Window, key: string, init: KeyboardEventInit = {}) => {
  act(() => {
    fireEvent.keyDown(target, { key, ...init })
  })
}

async function openPalette() {
  press(window, 'k', { ctrlKey: true })
  const dialog = await screen.findByRole('dialog', { name: 'Command palette' })
  const input = within(dialog).getByRole('combobox')
  return { dialog, input }
}

async function type(input: HTMLElement, text: string) {
  await settled(() => {
    fireEvent.change(input, { target: { value: text } })
  })
}

const selected = (dialog: HTMLElement) =>
  within(dialog)
    .getAllByRole('option')
    .find((option) => option.getAttribute('aria-selected') === 'true')?.textContent

describe('the command palette', () => {
  it('opens on Ctrl+K with the focus in its field, and Escape gives the focus back', async () => {
    const runs = screen.getByRole('button', { name: /^Runs/ })
    runs.focus()
    const { input } = await openPalette()
    expect(document.activeElement).toBe(input)
    press(input, 'Escape')
    expect(screen.queryByRole('dialog', { name: 'Command palette' })).toBeNull()
    expect(document.activeElement).toBe(runs)
  })

  it('closes on Ctrl+K again, and takes "?" typed in it as text', async () => {
    const { input } = await openPalette()
    press(input, '?', { shiftKey: true })
    expect(screen.queryByRole('dialog', { name: 'Keyboard shortcuts' })).toBeNull()
    press(input, 'k', { ctrlKey: true })
    expect(screen.queryByRole('dialog', { name: 'Command palette' })).toBeNull()
  })

  it('finds a flow by its name, moves with the arrows and opens it with Enter', async () => {
    useAppStore.getState().goTo('assets')
    const { dialog, input } = await openPalette()
    expect(selected(dialog)).toBe('New flow')
    press(input, 'ArrowDown')
    expect(selected(dialog)).toBe('Sync nowF5')
    press(input, 'ArrowUp')
    press(input, 'ArrowUp')
    // Around the end, to the last one.
    expect(selected(dialog)).toBe('Portrait in oilsFlow')
    await type(input, 'harbour')
    expect(selected(dialog)).toBe('Harbour at duskFlow')
    await settled(() => {
      fireEvent.keyDown(input, { key: 'Enter' })
    })
    expect(screen.queryByRole('dialog', { name: 'Command palette' })).toBeNull()
    expect(main.callsTo('flows.get')).toEqual([{ id: u(1) }])
    expect(useAppStore.getState().section).toBe('flows')
    expect(useAppStore.getState().editor?.name).toBe('Harbour at dusk')
  })

  it('lists the recent flows, the sections and the actions before anything is typed', async () => {
    const { dialog } = await openPalette()
    const groups = [...dialog.querySelectorAll('[cmdk-group-heading]')].map((h) => h.textContent)
    expect(groups).toEqual(['Actions', 'Go to', 'Recent flows'])
    const names = within(dialog)
      .getAllByRole('option')
      .map((option) => option.querySelector('.palette-label')?.textContent)
    expect(names).toEqual([
      'New flow',
      'Sync now',
      'Switch to the dark theme',
      'Show keyboard shortcuts',
      'Go to Flows',
      'Go to Assets',
      'Go to Runs',
      'Go to Evaluations',
      'Go to Batches',
      'Go to Settings',
      'Harbour at dusk',
      'Portrait in oils',
    ])
  })

  it('finds runs, evaluations and assets in the mirror, and opens each one', async () => {
    // The double's domains are frozen: the window gets a copy whose `get`s are watched.
    const openedAssets = vi.fn(main.api.assets.get)
    const openedEvaluations = vi.fn(main.api.evaluations.get)
    window.atelier = {
      ...main.api,
      assets: { ...main.api.assets, get: openedAssets },
      evaluations: { ...main.api.evaluations, get: openedEvaluations },
    }
    /** Finds the words, then chooses the found record whose option is named so. */
    async function choose(name: RegExp) {
      const { dialog, input } = await openPalette()
      await type(input, 'astrolabe')
      const option = await within(dialog).findByRole('option', { name })
      await settled(() => {
        fireEvent.click(option)
      })
      expect(screen.queryByRole('dialog', { name: 'Command palette' })).toBeNull()
      return dialog
    }

    const { dialog, input } = await openPalette()
    await type(input, 'astrolabe')
    await within(dialog).findByRole('option', { name: /brass astrolabe/ })
    expect(main.callsTo('search.query')).toContainEqual({ text: 'astrolabe', limit: 12 })
    const headings = [...dialog.querySelectorAll('[cmdk-group-heading]')].map((h) => h.textContent)
    expect(headings).toEqual(expect.arrayContaining(['Runs', 'Evaluations', 'Assets']))
    press(input, 'Escape')

    // A run: its page, not only the Runs list.
    await choose(/brass astrolabe/)
    expect(useAppStore.getState().section).toBe('runs')
    expect(useAppStore.getState().selectedRunId).toBe(run.id)

    // An evaluation: its page is opened and read.
    await choose(/the astrolabe, judged/)
    expect(useAppStore.getState().section).toBe('evaluations')
    expect(useAppStore.getState().openEvaluationId).toBe(evaluation.id)
    expect(openedEvaluations).toHaveBeenCalledWith({ id: evaluation.id })

    // An asset: its details are asked for.
    expect(openedAssets).not.toHaveBeenCalled()
    await choose(/astrolabe-study\.png/)
    expect(useAppStore.getState().section).toBe('assets')
    expect(openedAssets).toHaveBeenCalledWith({ id: asset.id })
  })

  it('goes to a section by its name', async () => {
    const { input } = await openPalette()
    await type(input, 'evaluations')
    await settled(() => {
      fireEvent.keyDown(input, { key: 'Enter' })
    })
    expect(useAppStore.getState().section).toBe('evaluations')
    expect(screen.getByRole('heading', { level: 1 }).textContent).toBe('Evaluations')
  })

  it('ranks an action whose name starts with the words above a template that mentions them', async () => {
    // The sandbox's template: "theme" is found in its description only, letter by letter.
    main.flows.set(u(3), {
      ...storedFlow(u(3), 'Image to upscaled image', 4_000),
      source: 'template',
      description: 'Doubles the width and height of an image with Atelier Upscale.',
    })
    const { dialog, input } = await openPalette()
    await type(input, 'theme')
    const options = within(dialog)
      .getAllByRole('option')
      .map((option) => option.textContent)
    expect(options[0]).toContain('Switch to the dark theme')
    expect(options.findIndex((text) => text.includes('Image to upscaled image'))).toBeGreaterThan(0)
    expect(selected(dialog)).toContain('Switch to the dark theme')
  })

  it('switches the theme, starts a sync, and opens the shortcuts', async () => {
    let { input } = await openPalette()
    await type(input, 'dark theme')
    await settled(() => {
      fireEvent.keyDown(input, { key: 'Enter' })
    })
    expect(useAppStore.getState().theme).toBe('dark')
    expect(document.documentElement.dataset.theme).toBe('dark')

    ;({ input } = await openPalette())
    await type(input, 'light')
    expect(within(screen.getByRole('dialog')).getAllByRole('option')[0]?.textContent).toContain(
      'Switch to the light theme',
    )
    await type(input, 'sync now')
    await settled(() => {
      fireEvent.keyDown(input, { key: 'Enter' })
    })
    expect(main.callsTo('sync.start')).toHaveLength(1)

    ;({ input } = await openPalette())
    await type(input, 'shortcuts')
    await settled(() => {
      fireEvent.keyDown(input, { key: 'Enter' })
    })
    expect(screen.queryByRole('dialog', { name: 'Command palette' })).toBeNull()
    expect(screen.getByRole('dialog', { name: 'Keyboard shortcuts' })).toBeTruthy()
  })

  it('makes a new flow under a free name and opens it', async () => {
    main.flows.set(u(3), storedFlow(u(3), 'Untitled flow', 1_000))
    const { input } = await openPalette()
    await type(input, 'new flow')
    await settled(() => {
      fireEvent.keyDown(input, { key: 'Enter' })
    })
    expect(main.callsTo('flows.create')).toEqual([{ name: 'Untitled flow 2' }])
    expect(useAppStore.getState().editor?.name).toBe('Untitled flow 2')
  })

  it('says so when nothing matches', async () => {
    const { dialog, input } = await openPalette()
    await type(input, 'zzqx')
    expect(await within(dialog).findByText('Nothing matches “zzqx”.')).toBeTruthy()
  })
})
