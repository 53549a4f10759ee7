// @vitest-environment happy-dom
import { act, fireEvent, render, screen, within } from '@testing-library/react'
import { createElement, Fragment } from 'react'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import type {
  AssetFolderItem,
  AssetItem,
  FolderListing,
  UploadSummary,
} from '../../src-shared/domain/assets'
import type { AtelierApi } from '../../src-shared/ipc/api'
import type { IpcChannel } from '../../src-shared/ipc/contract'
import type { IpcEvents } from '../../src-shared/ipc/events'
import type { IpcError, IpcResult } from '../../src-shared/ipc/result'
import { AssetsPage } from '../../src-renderer/src/assets'
import { splitPath } from '../../src-renderer/src/assets/dropped'
import { Toasts } from '../../src-renderer/src/shell/Toasts'
import { useAppStore } from '../../src-renderer/src/store'
import { idle, summary as syncSummary, SYNCING, u } from './shell-transport'
import { unavailableApi } from './unavailable-api'
import { installApi, removeApi, sizeScrollAreas, unsizeScrollAreas } from './harness'

/**
 * The Assets section with its real store, components and words; only the IPC transport is a
 * double: what the main process would answer, kept in memory, and the events it would push.
 */

const ok = <T>(value: T): Promise<IpcResult<T>> => Promise.resolve({ ok: true, value })
const failed = (error: IpcError): Promise<IpcResult<never>> => Promise.resolve({ ok: false, error })

function asset(n: number, name: string, folderId: string | null): AssetItem {
  return {
    id: u(100 + n),
    name,
    folderId,
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

const folder = (n: number, name: string, parentId: string | null, path: string) =>
  ({ id: u(n), name, parentId, path, assetCount: 1 }) satisfies AssetFolderItem

function summary(over: Partial<UploadSummary> = {}): UploadSummary {
  return {
    id: u(900),
    root: '/home/ana/Coast shoot',
    folderName: 'Coast shoot',
    state: 'uploading',
    watched: false,
    startedAt: 1_000,
    finishedAt: null,
    files: { total: 10, done: 3, duplicates: 1, failed: 0 },
    bytes: { total: 10_000, done: 4_000 },
    rate: 2_048,
    etaSeconds: 3,
    failures: [],
    skipped: 2,
    unreadable: 0,
    error: null,
    ...over,
  }
}

class AssetsMain {
  readonly calls: { channel: IpcChannel; args: unknown }[] = []
  items = [asset(1, 'dunes.png', u(1)), asset(2, 'gulls.png', u(1)), asset(3, 'pier.png', u(2))]
  folders = [
    folder(1, 'Coast shoot', null, '/Coast shoot'),
    folder(2, 'Day 1', u(1), '/Coast shoot/Day 1'),
  ]
  listings: Record<string, FolderListing> = {
    home: {
      path: '/home/ana',
      parent: '/home',
      home: '/home/ana',
      folders: [{ name: 'Pictures', path: '/home/ana/Pictures' }],
    },
    '/home/ana/Pictures': {
      path: '/home/ana/Pictures',
      parent: '/home/ana',
      home: '/home/ana',
      folders: [],
    },
  }
  /** Folders deleted and held for an undo, by undo id. */
  readonly held = new Map<string, AssetFolderItem>()
  private readonly listeners = new Map<string, Set<(payload: never) => void>>()

  private nameTaken(name: string, parentId: string | null) {
    return this.folders.some((f) => f.parentId === parentId && f.name === name)
  }

  private taken(name: string): Promise<IpcResult<never>> {
    return failed({
      code: 'FOLDER_NAME_TAKEN',
      message: `There is already a folder named "${name}" there. Choose another name or place.`,
    })
  }

  argsOf(channel: IpcChannel): unknown[] {
    return this.calls.filter((c) => c.channel === channel).map((c) => c.args)
  }

  emit<E extends keyof IpcEvents>(event: E, payload: IpcEvents[E]) {
    for (const listener of this.listeners.get(event) ?? []) {
      ;(listener as (value: IpcEvents[E]) => void)(payload)
    }
  }

  private record(channel: IpcChannel, args?: unknown) {
    this.calls.push({ channel, args })
  }

  readonly api: AtelierApi = {
    ...unavailableApi(),
    assets: {
      ...unavailableApi().assets,
      list: (args) => {
        this.record('assets.list', args)
        const items = this.items.filter(
          (item) =>
            (args.folder === undefined || item.folderId === args.folder) &&
            item.name.includes(args.text ?? ''),
        )
        return ok({ items, next: null })
      },
      folders: () => {
        this.record('assets.folders')
        return ok({ folders: this.folders, rootCount: 0, total: this.items.length })
      },
      get: ({ id }) => {
        this.record('assets.get', { id })
        const item = this.items.find((a) => a.id === id) ?? asset(9, 'gone', null)
        return ok({
          ...item,
          folderPath: '/Coast shoot',
          updatedAt: item.createdAt,
          metadata: {},
          usedBy: [],
          usedByMore: false,
        })
      },
      delete: (args) => {
        this.record('assets.delete', args)
        return ok({ undoId: u(700), count: args.ids.length, sendsAt: Date.now() + 6_000 })
      },
      undoDelete: (args) => {
        this.record('assets.undoDelete', args)
        const held = this.held.get(args.undoId)
        if (held) this.folders.push(held)
        this.held.delete(args.undoId)
        return ok(null)
      },
      // The folder channels answer as main does (src-main/review/assets/changes.ts): names are
      // unique among siblings, only an empty folder is deleted, and it is held for an undo.
      createFolder: (args) => {
        this.record('assets.createFolder', args)
        const parentId = args.parentId ?? null
        const parent = this.folders.find((f) => f.id === parentId)
        if (this.nameTaken(args.name, parentId)) return this.taken(args.name)
        const made = {
          id: u(50 + this.folders.length),
          name: args.name,
          parentId,
          path: `${parent?.path ?? ''}/${args.name}`,
          assetCount: 0,
        }
        this.folders.push(made)
        return ok(made)
      },
      renameFolder: (args) => {
        this.record('assets.renameFolder', args)
        const found = this.folders.find((f) => f.id === args.id)
        if (!found) throw new Error(`no folder ${args.id} in this test`)
        if (this.nameTaken(args.name, found.parentId)) return this.taken(args.name)
        const renamed = { ...found, name: args.name, path: found.path.replace(/[^/]+$/, args.name) }
        this.folders = this.folders.map((f) => (f.id === args.id ? renamed : f))
        return ok(renamed)
      },
      deleteFolder: (args) => {
        this.record('assets.deleteFolder', args)
        const found = this.folders.find((f) => f.id === args.id)
        if (!found) throw new Error(`no folder ${args.id} in this test`)
        if (found.assetCount > 0 || this.folders.some((f) => f.parentId === found.id)) {
          return failed({
            code: 'FOLDER_NOT_EMPTY',
            message: `"${found.name}" still holds assets or folders. Move or delete them first, then delete the folder.`,
          })
        }
        const undoId = u(710 + this.held.size)
        this.held.set(undoId, found)
        this.folders = this.folders.filter((f) => f.id !== found.id)
        return ok({ undoId, count: 1, sendsAt: Date.now() + 6_000 })
      },
    },
    uploads: {
      ...unavailableApi().uploads,
      list: () => ok([]),
      watches: () => ok([]),
      files: (args) => {
        this.record('uploads.files', args)
        return ok([])
      },
      browse: (args) => {
        this.record('uploads.browse', args)
        const listing = this.listings[args.path ?? 'home']
        return listing
          ? ok(listing)
          : Promise.resolve({
              ok: false,
              error: { code: 'FOLDER_MISSING', message: `There is no folder at "${args.path}".` },
            })
      },
      start: (args) => {
        this.record('uploads.start', args)
        const named = args.files
          ? { named: { count: args.files.length, first: [...args.files].sort()[0] ?? '' } }
          : {}
        return ok(
          summary({
            id: u(900 + this.argsOf('uploads.start').length),
            state: 'scanning',
            root: args.path,
            ...named,
          }),
        )
      },
      pause: (args) => {
        this.record('uploads.pause', args)
        return ok(summary({ state: 'paused' }))
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

let main: AssetsMain

beforeEach(async () => {
  sizeScrollAreas(['asset-scroller', 'upload-files'])
  main = new AssetsMain()
  installApi(main.api)
  render(createElement(Fragment, null, createElement(AssetsPage), createElement(Toasts)))
  await act(async () => {})
})

afterEach(() => {
  unsizeScrollAreas()
  removeApi()
})

const grid = () => screen.getByRole('grid', { name: 'Assets' })
const tile = (name: string) => within(grid()).getByRole('gridcell', { name })
const selected = () =>
  within(grid())
    .getAllByRole('gridcell')
    .filter((cell) => cell.getAttribute('aria-selected') === 'true')
    .map((cell) => cell.getAttribute('aria-label'))

async function click(element: Element, init: MouseEventInit = {}) {
  await act(async () => {
    fireEvent.click(element, init)
    await Promise.resolve()
  })
}

describe('the asset list', () => {
  it('shows the mirror’s assets and the folders nested by parent', () => {
    expect(
      within(grid())
        .getAllByRole('gridcell')
        .map((c) => c.getAttribute('aria-label')),
    ).toEqual(['dunes.png', 'gulls.png', 'pier.png'])
    const tree = screen.getByRole('tree', { name: 'Asset folders' })
    const coast = within(tree).getByRole('button', { name: 'Coast shoot' }).closest('li')
    expect(coast).not.toBeNull()
    // Day 1 sits inside Coast shoot, not beside it.
    expect(within(coast as HTMLElement).getByRole('button', { name: 'Day 1' })).toBeTruthy()
    expect(screen.getByText('3 assets')).toBeTruthy()
  })

  it('lists a folder’s assets when the folder is chosen', async () => {
    const tree = screen.getByRole('tree', { name: 'Asset folders' })
    await click(within(tree).getByRole('button', { name: 'Day 1' }))
    expect(main.argsOf('assets.list').at(-1)).toMatchObject({ folder: u(2) })
    expect(
      within(grid())
        .getAllByRole('gridcell')
        .map((c) => c.getAttribute('aria-label')),
    ).toEqual(['pier.png'])
  })

  it('selects with a click, Ctrl+click, Shift+click and Ctrl+A, and opens the one clicked', async () => {
    await click(tile('dunes.png'))
    expect(selected()).toEqual(['dunes.png'])
    expect(main.argsOf('assets.get')).toEqual([{ id: u(101) }])
    expect(screen.getByRole('complementary', { name: 'Asset dunes.png' })).toBeTruthy()
    await click(tile('pier.png'), { ctrlKey: true })
    expect(selected()).toEqual(['dunes.png', 'pier.png'])
    await click(tile('dunes.png'))
    await click(tile('pier.png'), { shiftKey: true })
    expect(selected()).toEqual(['dunes.png', 'gulls.png', 'pier.png'])
    await click(tile('gulls.png'))
    act(() => {
      fireEvent.keyDown(grid(), { key: 'a', ctrlKey: true })
    })
    expect(selected()).toHaveLength(3)
    expect(screen.getByText('3 assets selected')).toBeTruthy()
  })

  it('deletes the selection with the Delete key, and undoes it from the toast', async () => {
    await click(tile('dunes.png'))
    await click(tile('gulls.png'), { ctrlKey: true })
    await act(async () => {
      fireEvent.keyDown(grid(), { key: 'Delete' })
      await Promise.resolve()
    })
    expect(main.argsOf('assets.delete')).toEqual([{ ids: [u(101), u(102)] }])
    // Hidden at once, before the delete is sent.
    expect(
      within(grid())
        .getAllByRole('gridcell')
        .map((c) => c.getAttribute('aria-label')),
    ).toEqual(['pier.png'])
    const toast = screen.getByTestId('toast')
    expect(toast.textContent).toContain('2 assets deleted')
    await click(within(toast).getByRole('button', { name: 'Undo' }))
    expect(main.argsOf('assets.undoDelete')).toEqual([{ undoId: u(700) }])
  })
})

describe('the asset details', () => {
  it('offers the file for download under its name while its address is fresh, and says why not otherwise', async () => {
    main.items[0] = { ...asset(1, 'dunes.png', u(1)), url: 'http://127.0.0.1:9/_storage/dunes' }
    await act(async () => {
      await useAppStore.getState().openAsset(u(101))
    })
    const panel = screen.getByRole('complementary', { name: 'Asset dunes.png' })
    const link = within(panel).getByRole('link', { name: 'Download' })
    expect(link.getAttribute('href')).toBe('http://127.0.0.1:9/_storage/dunes')
    expect(link.getAttribute('download')).toBe('dunes.png')

    await act(async () => {
      await useAppStore.getState().openAsset(u(102))
    })
    const other = screen.getByRole('complementary', { name: 'Asset gulls.png' })
    expect(within(other).queryByRole('link', { name: 'Download' })).toBeNull()
    expect(other.textContent).toContain('To download it, sync while online')
  })
})

describe('the folder tree', () => {
  const tree = () => screen.getByRole('tree', { name: 'Asset folders' })
  const folderButton = (name: string) => within(tree()).getByRole('button', { name })
  /** The folder's row in the tree, its sub-folders included. */
  const item = (name: string) => folderButton(name).closest('li') as HTMLElement

  async function menu(folderName: string, action: string) {
    await click(within(tree()).getByRole('button', { name: `Actions for ${folderName}` }))
    await click(within(screen.getByRole('menu')).getByRole('menuitem', { name: action }))
  }

  async function typeAndPress(field: HTMLElement, value: string, key: 'Enter' | 'Escape') {
    await act(async () => {
      fireEvent.change(field, { target: { value } })
      fireEvent.keyDown(field, { key })
      await Promise.resolve()
    })
  }

  it('makes a folder at the top level and one inside another, named in place', async () => {
    await click(screen.getByRole('button', { name: 'New folder' }))
    const top = within(tree()).getByRole('textbox', { name: 'New folder name' })
    // Escape gives up: nothing is made.
    await typeAndPress(top, 'Harbour', 'Escape')
    expect(within(tree()).queryByRole('textbox')).toBeNull()
    expect(main.argsOf('assets.createFolder')).toEqual([])

    await click(screen.getByRole('button', { name: 'New folder' }))
    await typeAndPress(
      within(tree()).getByRole('textbox', { name: 'New folder name' }),
      '  Harbour ',
      'Enter',
    )
    expect(main.argsOf('assets.createFolder')).toEqual([{ name: 'Harbour', parentId: null }])
    expect(within(tree()).queryByRole('textbox')).toBeNull()
    // The tree is read again and shows it at the top level, beside Coast shoot.
    expect(folderButton('Harbour').closest('ul')?.getAttribute('role')).toBe('tree')

    await menu('Day 1', 'New folder inside')
    await typeAndPress(
      within(tree()).getByRole('textbox', { name: 'New folder in Day 1' }),
      'Blue hour',
      'Enter',
    )
    expect(main.argsOf('assets.createFolder').at(-1)).toEqual({
      name: 'Blue hour',
      parentId: u(2),
    })
    expect(within(item('Day 1')).getByRole('button', { name: 'Blue hour' })).toBeTruthy()
    expect(within(item('Coast shoot')).getByRole('button', { name: 'Blue hour' })).toBeTruthy()
    expect(item('Day 1').getAttribute('aria-expanded')).toBe('true')
  })

  it('renames a folder in place, and keeps the field when the name is taken', async () => {
    const complaints = vi.spyOn(console, 'error')
    await menu('Day 1', 'Rename')
    const field = within(tree()).getByRole<HTMLInputElement>('textbox', {
      name: 'New name for Day 1',
    })
    expect(field.value).toBe('Day 1')
    // The field sits in the folder's own item, not in an item nested inside it.
    expect(field.closest('li')?.getAttribute('role')).toBe('treeitem')
    expect(complaints).not.toHaveBeenCalled()
    complaints.mockRestore()
    await typeAndPress(field, 'Dusk', 'Escape')
    expect(main.argsOf('assets.renameFolder')).toEqual([])
    expect(folderButton('Day 1')).toBeTruthy()

    // A sibling already has the name: main refuses, the toast says why, the typing stays.
    main.folders.push({
      id: u(3),
      name: 'Day 2',
      parentId: u(1),
      path: '/Coast shoot/Day 2',
      assetCount: 0,
    })
    await menu('Day 1', 'Rename')
    const again = within(tree()).getByRole<HTMLInputElement>('textbox', {
      name: 'New name for Day 1',
    })
    await typeAndPress(again, 'Day 2', 'Enter')
    expect(main.argsOf('assets.renameFolder')).toEqual([{ id: u(2), name: 'Day 2' }])
    expect(screen.getByTestId('toast').textContent).toContain(
      'There is already a folder named "Day 2" there.',
    )
    expect(again.value).toBe('Day 2')

    await typeAndPress(again, 'Day one', 'Enter')
    expect(main.argsOf('assets.renameFolder').at(-1)).toEqual({ id: u(2), name: 'Day one' })
    expect(within(tree()).queryByRole('textbox')).toBeNull()
    expect(within(item('Coast shoot')).getByRole('button', { name: 'Day one' })).toBeTruthy()
    expect(within(tree()).queryByRole('button', { name: 'Day 1' })).toBeNull()
  })

  it('deletes an empty folder with an undo, and refuses one that holds something', async () => {
    // A sync brings an empty folder; the tree reads the folders again when it ends.
    main.folders.push({
      id: u(3),
      name: 'Day 2',
      parentId: u(1),
      path: '/Coast shoot/Day 2',
      assetCount: 0,
    })
    await act(async () => {
      main.emit('sync.status', SYNCING)
      main.emit('sync.status', idle(syncSummary()))
      await Promise.resolve()
    })
    // It is the folder being shown when it goes.
    await click(folderButton('Day 2'))
    expect(main.argsOf('assets.list').at(-1)).toMatchObject({ folder: u(3) })

    await menu('Day 2', 'Delete')
    expect(main.argsOf('assets.deleteFolder')).toEqual([{ id: u(3) }])
    expect(within(tree()).queryByRole('button', { name: 'Day 2' })).toBeNull()
    // Its list gave way to every asset.
    expect(main.argsOf('assets.list').at(-1)).not.toHaveProperty('folder')
    expect(within(tree()).getByRole('treeitem', { selected: true }).textContent).toContain(
      'All assets',
    )
    const toast = screen.getByTestId('toast')
    expect(toast.textContent).toContain('"Day 2" deleted')
    await click(within(toast).getByRole('button', { name: 'Undo' }))
    expect(main.argsOf('assets.undoDelete')).toEqual([{ undoId: u(710) }])
    expect(within(item('Coast shoot')).getByRole('button', { name: 'Day 2' })).toBeTruthy()

    // Coast shoot still holds Day 1 and its assets: main refuses, and the toast says why.
    await menu('Coast shoot', 'Delete')
    expect(main.argsOf('assets.deleteFolder').at(-1)).toEqual({ id: u(1) })
    expect(
      screen.getAllByTestId('toast').some((t) => t.textContent.includes('still holds assets')),
    ).toBe(true)
    expect(folderButton('Coast shoot')).toBeTruthy()
  })
})

describe('uploads', () => {
  it('shows an upload’s progress as it is pushed, with duplicates and what was left out', async () => {
    act(() => {
      main.emit('uploads.progress', { upload: summary(), files: [] })
    })
    await click(screen.getByRole('button', { name: 'Uploads (1)' }))
    const card = screen.getByRole('listitem', { name: 'Upload of Coast shoot' })
    expect(card.textContent).toContain('4 of 10 files')
    expect(card.textContent).toContain('1 duplicate skipped')
    expect(card.textContent).toContain('2 files left out')
    expect(card.textContent).toContain('2.0 KB/s')
    expect(within(card).getByRole('progressbar').getAttribute('aria-valuenow')).toBe('40')

    await click(within(card).getByRole('button', { name: 'Show files' }))
    expect(main.argsOf('uploads.files')).toEqual([{ id: u(900) }])
    act(() => {
      main.emit('uploads.progress', {
        upload: summary({ files: { total: 10, done: 4, duplicates: 1, failed: 1 } }),
        files: [
          {
            seq: 7,
            relativePath: 'Day 1/dunes.png',
            sizeBytes: 1000,
            state: 'failed',
            bytesDone: 0,
            error: { code: 'FILE_CHANGED', message: 'The file changed while it was sent.' },
          },
        ],
      })
    })
    const files = within(card).getByRole('list', { name: 'Files' })
    expect(within(files).getByRole('listitem').textContent).toContain('Failed')
    expect(card.textContent).toContain('1 failure')

    await click(within(card).getByRole('button', { name: 'Pause' }))
    expect(main.argsOf('uploads.pause')).toEqual([{ id: u(900) }])
    expect(card.textContent).toContain('Paused')
  })

  it('names the files an upload left out, each with its reason', async () => {
    act(() => {
      main.emit('uploads.progress', {
        upload: summary({
          state: 'finished',
          skipped: 3,
          leftOut: [
            { relativePath: '.DS_Store', reason: 'system' },
            { relativePath: 'notes.txt', reason: 'notMedia' },
          ],
        }),
        files: [],
      })
    })
    await click(screen.getByRole('button', { name: 'Uploads' }))
    const card = screen.getByRole('listitem', { name: 'Upload of Coast shoot' })
    expect(card.textContent).toContain('3 files left out')
    const list = within(card).getByRole('list', { name: 'Left out' })
    expect(
      within(list)
        .getAllByRole('listitem')
        .map((li) => li.textContent),
    ).toEqual(['.DS_Store: System file', 'notes.txt: Not an image or video', 'And 1 more.'])
  })

  it('chooses a folder by browsing this machine in the browser mode, then uploads it', async () => {
    await click(screen.getByRole('button', { name: 'Choose folder…' }))
    const dialog = screen.getByRole('dialog', { name: 'Choose a folder to upload' })
    expect(main.argsOf('uploads.browse')).toEqual([{}])
    await click(within(dialog).getByRole('button', { name: /Pictures/ }))
    expect(main.argsOf('uploads.browse').at(-1)).toEqual({ path: '/home/ana/Pictures' })
    const path = within(dialog).getByRole('textbox', { name: 'Folder path' })
    expect((path as HTMLInputElement).value).toBe('/home/ana/Pictures')
    expect(within(dialog).getByText('No folders inside; this one can be uploaded.')).toBeTruthy()

    // A typed path that is not there says so, from the main process's answer.
    await act(async () => {
      fireEvent.change(path, { target: { value: '/nowhere' } })
      fireEvent.submit(path.closest('form') as HTMLFormElement)
      await Promise.resolve()
    })
    expect(within(dialog).getByRole('alert').textContent).toContain('There is no folder at')

    await act(async () => {
      fireEvent.change(path, { target: { value: '/home/ana/Pictures' } })
      await Promise.resolve()
    })
    await click(within(dialog).getByRole('checkbox'))
    await click(within(dialog).getByRole('button', { name: 'Upload this folder' }))
    expect(main.argsOf('uploads.start')).toEqual([{ path: '/home/ana/Pictures', watch: true }])
    expect(screen.queryByRole('dialog')).toBeNull()
    expect(screen.getByRole('complementary', { name: 'Uploads' })).toBeTruthy()
  })

  it('uploads into the folder selected in the tree, says so, and lets it be changed', async () => {
    const tree = screen.getByRole('tree', { name: 'Asset folders' })
    await click(within(tree).getByRole('button', { name: 'Day 1' }))
    await click(screen.getByRole('button', { name: 'Choose folder…' }))
    const dialog = screen.getByRole('dialog', { name: 'Choose a folder to upload' })
    const into = within(dialog).getByRole<HTMLSelectElement>('combobox', { name: 'Into' })
    expect(into.selectedOptions[0]?.textContent).toBe('/Coast shoot/Day 1')
    await click(within(dialog).getByRole('button', { name: /Pictures/ }))
    await click(within(dialog).getByRole('button', { name: 'Upload this folder' }))
    expect(main.argsOf('uploads.start')).toEqual([
      { path: '/home/ana/Pictures', watch: false, into: u(2) },
    ])

    // Changed in the dialog: the top level, sent as no folder at all.
    await click(screen.getByRole('button', { name: 'Choose folder…' }))
    const again = screen.getByRole('dialog', { name: 'Choose a folder to upload' })
    await act(async () => {
      fireEvent.change(within(again).getByRole('combobox', { name: 'Into' }), {
        target: { value: '' },
      })
      await Promise.resolve()
    })
    await click(within(again).getByRole('button', { name: /Pictures/ }))
    await click(within(again).getByRole('button', { name: 'Upload this folder' }))
    expect(main.argsOf('uploads.start').at(-1)).toEqual({
      path: '/home/ana/Pictures',
      watch: false,
    })
  })
})

describe('dropping files and folders from the desktop', () => {
  /** What a drop from the file manager carries: a File per item, each a file or a folder. */
  function drop(entries: { file: File; folder?: boolean }[]) {
    const dataTransfer = {
      types: ['Files'],
      files: entries.map((entry) => entry.file),
      items: entries.map(({ file, folder = false }) => ({
        kind: 'file',
        type: file.type,
        getAsFile: () => file,
        webkitGetAsEntry: () => ({ isDirectory: folder, isFile: !folder, name: file.name }),
      })),
    }
    const zone = screen.getByRole('region', { name: 'Asset list' })
    act(() => {
      fireEvent.dragOver(zone, { dataTransfer })
    })
    expect(screen.getByText('Drop to upload')).toBeTruthy()
    return act(async () => {
      fireEvent.drop(zone, { dataTransfer })
      await Promise.resolve()
    })
  }

  const file = (name: string) => new File(['x'], name, { type: 'image/png' })

  afterEach(() => {
    delete window.atelierFiles
  })

  it('uploads dropped folders as folders and dropped files by the folder they are in', async () => {
    const where = new Map<File, string>()
    const put = (path: string) => {
      const made = file(path.slice(path.lastIndexOf('/') + 1))
      where.set(made, path)
      return made
    }
    // The desktop preload's helper, as the window would have it (webUtils.getPathForFile).
    window.atelierFiles = { pathOf: (dropped) => where.get(dropped) ?? null }
    await drop([
      { file: put('/home/ana/Harbour'), folder: true },
      { file: put('/home/ana/Desktop/b.png') },
      { file: put('/home/ana/Desktop/a.png') },
      { file: put('/home/ana/Pictures/c [1].png') },
    ])
    expect(main.argsOf('uploads.start')).toEqual([
      { path: '/home/ana/Harbour', watch: false },
      { path: '/home/ana/Desktop', files: ['b.png', 'a.png'], watch: false },
      { path: '/home/ana/Pictures', files: ['c [1].png'], watch: false },
    ])
    // Nothing to choose: the uploads are under way, and shown, named by what was dropped.
    expect(screen.queryByRole('dialog')).toBeNull()
    const panel = screen.getByRole('complementary', { name: 'Uploads' })
    expect(
      within(panel)
        .getAllByRole('listitem')
        .map((card) => card.getAttribute('aria-label')),
    ).toEqual(
      expect.arrayContaining([
        'Upload of Harbour',
        'Upload of 2 files from Desktop',
        'Upload of c [1].png',
      ]),
    )
  })

  it('leaves out what has no path, and says so', async () => {
    const photo = file('photo.png')
    window.atelierFiles = {
      pathOf: (dropped) => (dropped === photo ? '/home/ana/photo.png' : null),
    }
    await drop([{ file: photo }, { file: file('made-in-script.png') }])
    expect(main.argsOf('uploads.start')).toEqual([
      { path: '/home/ana', files: ['photo.png'], watch: false },
    ])
    expect(screen.getByTestId('toast').textContent).toContain('1 item left out')
  })

  it('asks for the folder in the browser mode, where a drop has no path', async () => {
    await drop([{ file: file('photo.png') }, { file: file('Harbour'), folder: true }])
    expect(main.argsOf('uploads.start')).toEqual([])
    expect(screen.getByTestId('toast').textContent).toContain('Choose the folder to upload')
    expect(screen.getByRole('dialog', { name: 'Choose a folder to upload' })).toBeTruthy()
  })

  it('asks for the folder too when the desktop cannot tell where the files are', async () => {
    window.atelierFiles = { pathOf: () => null }
    await drop([{ file: file('photo.png') }])
    expect(main.argsOf('uploads.start')).toEqual([])
    expect(screen.getByRole('dialog', { name: 'Choose a folder to upload' })).toBeTruthy()
  })

  it('splits a path of either kind into its folder and name', () => {
    expect(splitPath('/home/ana/a.png')).toEqual({ folder: '/home/ana', name: 'a.png' })
    expect(splitPath('/a.png')).toEqual({ folder: '/', name: 'a.png' })
    expect(splitPath('C:\\Users\\ana\\a.png')).toEqual({ folder: 'C:\\Users\\ana', name: 'a.png' })
    expect(splitPath('C:\\a.png')).toEqual({ folder: 'C:\\', name: 'a.png' })
    expect(splitPath('a.png')).toBeNull()
  })
})
