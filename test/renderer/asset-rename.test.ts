// @vitest-environment happy-dom
import { act, fireEvent, render, screen, within } from '@testing-library/react'
import { createElement, Fragment } from 'react'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import type { AssetDetail, AssetItem, AssetRename } from '../../src-shared/domain/assets'
import type { AtelierApi } from '../../src-shared/ipc/api'
import type { IpcResult } from '../../src-shared/ipc/result'
import { AssetsPage } from '../../src-renderer/src/assets'
import { Toasts } from '../../src-renderer/src/shell/Toasts'
import { u } from './shell-transport'
import { unavailableApi } from './unavailable-api'
import { installApi, removeApi, sizeScrollAreas, unsizeScrollAreas } from './harness'

/**
 * Renaming an asset in its details panel, with the real store, components and words; only the
 * IPC transport is a double. `answerRename` is held until the test lets it go, so what the
 * screen shows before the main process answers can be seen.
 */

const ok = <T>(value: T): Promise<IpcResult<T>> => Promise.resolve({ ok: true, value })

function asset(n: number, name: string): AssetItem {
  return {
    id: u(100 + n),
    name,
    folderId: null,
    mediaType: 'image',
    contentType: 'image/png',
    sizeBytes: 1000 * n,
    sha256: String(n).padStart(64, '0'),
    width: 160,
    height: 120,
    durationMs: null,
    status: 'ready',
    createdAt: `2026-03-0${n}T09:30:00Z`,
    url: null,
  }
}

const detailOf = (item: AssetItem): AssetDetail => ({
  ...item,
  folderPath: null,
  updatedAt: item.createdAt,
  metadata: {},
  usedBy: [],
  usedByMore: false,
})

let items: AssetItem[]
let renames: AssetRename[]
let release: (() => void) | null
/** Offline: the main process keeps the rename waiting in the outbox. */
let offline: boolean

function api(): AtelierApi {
  const base = unavailableApi()
  return {
    ...base,
    assets: {
      ...base.assets,
      list: () => ok({ items, next: null }),
      folders: () => ok({ folders: [], rootCount: items.length, total: items.length }),
      get: ({ id }) => ok(detailOf(items.find((item) => item.id === id) ?? asset(9, 'gone'))),
      rename: async (args) => {
        renames.push(args)
        await new Promise<void>((resolve) => {
          release = resolve
        })
        const item = items.find((each) => each.id === args.id)
        if (!item) throw new Error('no such asset in this test')
        const renamed: AssetItem = offline
          ? {
              ...item,
              name: args.name,
              pendingRename: { state: 'waiting', name: args.name, message: null },
            }
          : { ...item, name: args.name }
        if (!offline) items = items.map((each) => (each.id === args.id ? renamed : each))
        return { ok: true, value: detailOf(renamed) }
      },
    },
    uploads: { ...base.uploads, list: () => ok([]), watches: () => ok([]) },
  }
}

beforeEach(async () => {
  sizeScrollAreas(['asset-scroller'])
  items = [asset(1, 'dunes.png'), asset(2, 'gulls.png')]
  renames = []
  release = null
  offline = false
  installApi(api())
  render(createElement(Fragment, null, createElement(AssetsPage), createElement(Toasts)))
  await act(async () => {})
})

afterEach(() => {
  unsizeScrollAreas()
  removeApi()
})

const grid = () => screen.getByRole('grid', { name: 'Assets' })
const names = () =>
  within(grid())
    .getAllByRole('gridcell')
    .map((cell) => cell.getAttribute('aria-label'))

async function settle(work: () => void) {
  await act(async () => {
    work()
    await Promise.resolve()
  })
}

async function openDunes() {
  await settle(() => fireEvent.click(within(grid()).getByRole('gridcell', { name: 'dunes.png' })))
  return screen.getByRole('complementary', { name: 'Asset dunes.png' })
}

async function answer() {
  await act(async () => {
    release?.()
    await new Promise((resolve) => setTimeout(resolve, 0))
  })
}

describe('renaming an asset', () => {
  it('shows the new name in the list at once, and Undo renames it back', async () => {
    const panel = await openDunes()
    await settle(() => fireEvent.click(within(panel).getByRole('button', { name: 'dunes.png' })))
    const field = within(panel).getByRole('textbox', { name: 'Asset name' })
    await settle(() => fireEvent.change(field, { target: { value: 'Dunes at noon.png' } }))
    await settle(() => fireEvent.keyDown(field, { key: 'Enter' }))

    // Before the main process answers.
    expect(renames).toEqual([{ id: u(101), name: 'Dunes at noon.png' }])
    expect(names()).toEqual(['Dunes at noon.png', 'gulls.png'])
    await answer()
    expect(names()).toEqual(['Dunes at noon.png', 'gulls.png'])
    expect(screen.getByText('Renamed "dunes.png" to "Dunes at noon.png"')).toBeTruthy()

    await settle(() => fireEvent.click(screen.getByRole('button', { name: 'Undo' })))
    expect(renames.at(-1)).toEqual({ id: u(101), name: 'dunes.png' })
    expect(names()).toEqual(['dunes.png', 'gulls.png'])
    await answer()
    expect(items[0]?.name).toBe('dunes.png')
  })

  it('refuses an empty or too long name and keeps the old one on Escape', async () => {
    const panel = await openDunes()
    await settle(() => fireEvent.click(within(panel).getByRole('button', { name: 'dunes.png' })))
    const field = within(panel).getByRole('textbox', { name: 'Asset name' })
    await settle(() => fireEvent.change(field, { target: { value: '   ' } }))
    expect(within(panel).getByRole('alert').textContent).toBe(
      'A name cannot be empty. Type a name, or press Escape to keep the old one.',
    )
    expect(within(panel).getByRole('button', { name: 'Rename' })).toHaveProperty('disabled', true)
    await settle(() => fireEvent.keyDown(field, { key: 'Enter' }))
    await settle(() => fireEvent.change(field, { target: { value: 'x'.repeat(256) } }))
    expect(within(panel).getByRole('alert').textContent).toBe(
      'A name is at most 255 characters; this one has 256.',
    )
    await settle(() => fireEvent.keyDown(field, { key: 'Escape' }))
    expect(renames).toEqual([])
    expect(within(panel).queryByRole('textbox')).toBeNull()
    expect(within(panel).getByRole('button', { name: 'dunes.png' })).toBeTruthy()
  })

  it('F2 renames the open asset; offline the name shows as not sent yet', async () => {
    offline = true
    const panel = await openDunes()
    await settle(() => fireEvent.keyDown(grid(), { key: 'F2' }))
    const field = within(panel).getByRole('textbox', { name: 'Asset name' })
    await settle(() => fireEvent.change(field, { target: { value: 'Offline dunes.png' } }))
    await settle(() => fireEvent.keyDown(field, { key: 'Enter' }))
    await answer()
    expect(names()).toEqual(['Offline dunes.png', 'gulls.png'])
    const renamed = screen.getByRole('complementary', { name: 'Asset Offline dunes.png' })
    expect(within(renamed).getByRole('status').textContent).toContain('not sent yet')
    expect(screen.getByText('It will be sent when Atelier is back online.')).toBeTruthy()
  })
})
