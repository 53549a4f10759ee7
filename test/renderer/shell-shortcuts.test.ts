// @vitest-environment happy-dom
import { act, cleanup, fireEvent, render, screen, within } from '@testing-library/react'
import { createElement } from 'react'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { App } from '../../src-renderer/src/shell/App'
import { SECTION_COPY } from '../../src-renderer/src/shell/sections'
import {
  comboKeys,
  comboLabel,
  sectionShortcutId,
  shortcut,
  SHORTCUTS,
  type KeyCombo,
  type ShortcutId,
} from '../../src-renderer/src/shell/shortcuts'
import { SECTIONS, useAppStore } from '../../src-renderer/src/store'
import { settled, ShellMain, storedFlow, u } from './shell-transport'

/**
 * The help sheet and the behaviour come from one table: every row of the sheet is pressed here,
 * combination by combination, and must do what the sheet says. The flow editor and the sync
 * area have their own handlers; they are held to the table the same way.
 */

let main: ShellMain

beforeEach(async () => {
  localStorage.clear()
  main = new ShellMain([storedFlow(u(1), 'Harbour at dusk')])
  window.atelier = main.api
  useAppStore.setState(useAppStore.getInitialState(), true)
  render(createElement(App))
  await act(async () => {})
})

afterEach(async () => {
  // The open flow's editor saves what waits before it closes.
  await act(async () => {
    await useAppStore.getState().closeFlow()
  })
  cleanup()
  useAppStore.setState(useAppStore.getInitialState(), true)
  delete window.atelier
})

/** The keydown a person makes for the combination (Shift turns a letter upper case). */
function keyInit(combo: KeyCombo): KeyboardEventInit {
  const shift = combo.shift === true
  return {
    key: shift && combo.key.length === 1 ? combo.key.toUpperCase() : combo.key,
    ctrlKey: combo.mod === true,
    shiftKey: shift,
  }
}

function pressEach(
  id: ShortcutId,
  check: (combo: KeyCombo) => void,
  target: Element | Window = window,
) {
  const { keys } = shortcut(id)
  expect(keys.length).toBeGreaterThan(0)
  for (const combo of keys) {
    act(() => {
      fireEvent.keyDown(target, keyInit(combo))
    })
    check(combo)
  }
}

const dialog = (name: string) => screen.queryByRole('dialog', { name })
const state = () => useAppStore.getState()

describe('the shortcuts sheet', () => {
  it('lists every shortcut of the table with its keys, Ctrl+K among them', () => {
    act(() => {
      fireEvent.keyDown(document.body, { key: '?', shiftKey: true })
    })
    const sheet = dialog('Keyboard shortcuts')
    expect(sheet).not.toBeNull()
    const rows = within(sheet as HTMLElement).getAllByRole('row')
    expect(rows.map((row) => row.dataset.shortcut)).toEqual(SHORTCUTS.map((s) => s.id))
    for (const entry of SHORTCUTS) {
      const row = rows.find((r) => r.dataset.shortcut === entry.id) as HTMLElement
      expect(row.textContent).toContain(entry.label)
      const shown = [...row.querySelectorAll('kbd')].map((kbd) => kbd.textContent)
      expect(shown).toEqual(entry.keys.flatMap((combo: KeyCombo) => comboKeys(combo, false)))
    }
    const palette = rows.find((r) => r.dataset.shortcut === 'palette') as HTMLElement
    expect([...palette.querySelectorAll('kbd')].map((kbd) => kbd.textContent)).toEqual([
      'Ctrl',
      'K',
    ])
  })

  it('writes the keys as each platform does', () => {
    expect(comboLabel({ key: 'k', mod: true }, false)).toBe('Ctrl+K')
    expect(comboLabel({ key: 'k', mod: true }, true)).toBe('⌘K')
    expect(comboLabel({ key: 'z', mod: true, shift: true }, false)).toBe('Ctrl+Shift+Z')
    expect(comboLabel({ key: 'z', mod: true, shift: true }, true)).toBe('⇧⌘Z')
    expect(comboLabel({ key: 'Escape' }, false)).toBe('Esc')
  })
})

describe('each shortcut does what the sheet says', () => {
  it('goes to each section', () => {
    for (const section of [...SECTIONS].reverse()) {
      pressEach(sectionShortcutId(section), () => {
        expect(state().section).toBe(section)
        expect(screen.getByRole('heading', { level: 1 }).textContent).toBe(
          SECTION_COPY[section].title,
        )
      })
    }
  })

  it('opens and closes the palette and the sheet, and Escape closes either', () => {
    pressEach('palette', () => {
      expect(dialog('Command palette')).not.toBeNull()
    })
    pressEach(
      'close',
      () => {
        expect(dialog('Command palette')).toBeNull()
      },
      document.activeElement ?? window,
    )
    for (const combo of shortcut('help').keys) {
      act(() => {
        fireEvent.keyDown(document.body, keyInit(combo))
      })
      const sheet = dialog('Keyboard shortcuts')
      expect(sheet).not.toBeNull()
      // The focus is in the sheet: the same keys close it.
      act(() => {
        fireEvent.keyDown(document.activeElement ?? window, keyInit(combo))
      })
      expect(dialog('Keyboard shortcuts')).toBeNull()
    }
    act(() => {
      fireEvent.keyDown(document.body, { key: '?', shiftKey: true })
    })
    pressEach(
      'close',
      () => {
        expect(dialog('Keyboard shortcuts')).toBeNull()
      },
      document.activeElement ?? window,
    )
  })

  it('moves through the palette and opens the chosen result', async () => {
    pressEach('palette', () => undefined)
    const input = screen.getByRole('combobox')
    const chosen = () =>
      screen
        .getAllByRole('option')
        .find((option) => option.getAttribute('aria-selected') === 'true')
        ?.querySelector('.palette-label')?.textContent
    expect(chosen()).toBe('New flow')
    const [down, up] = shortcut('palette.move').keys
    fireEvent.keyDown(input, keyInit(down as KeyCombo))
    fireEvent.keyDown(input, keyInit(down as KeyCombo))
    expect(chosen()).toBe('Switch to the dark theme')
    fireEvent.keyDown(input, keyInit(up as KeyCombo))
    expect(chosen()).toBe('Sync now')
    await settled(() => {
      for (const combo of shortcut('palette.choose').keys) fireEvent.keyDown(input, keyInit(combo))
    })
    expect(main.callsTo('sync.start')).toHaveLength(1)
  })

  it('syncs now', async () => {
    const before = main.callsTo('sync.start').length
    await settled(() => {
      for (const combo of shortcut('sync').keys) fireEvent.keyDown(window, keyInit(combo))
    })
    expect(main.callsTo('sync.start')).toHaveLength(before + shortcut('sync').keys.length)
  })

  it('copies, pastes, deletes, undoes and redoes in the flow editor', async () => {
    await act(async () => {
      await state().openFlow(u(1))
    })
    // The editor's code comes in a chunk of its own: it is open once its toolbar shows.
    expect(
      await screen.findByRole('toolbar', { name: 'Flow editor' }, { timeout: 10_000 }),
    ).toBeTruthy()
    const nodeCount = () => state().doc?.nodes.length
    const opened = state().doc
    const [first] = opened?.nodes ?? []
    act(() => {
      state().select({ nodeIds: [first?.id ?? ''] })
    })

    pressEach('editor.copy', () => {
      expect(state().clipboard).not.toBeNull()
    })
    const pastes = shortcut('editor.paste').keys.length
    pressEach('editor.paste', () => undefined)
    expect(nodeCount()).toBe(2 + pastes)
    const pasted = state().doc

    let undone = 0
    pressEach('editor.undo', () => {
      undone++
    })
    expect(state().doc).toBe(opened)
    expect(undone).toBe(pastes)
    const [undo] = shortcut('editor.undo').keys
    for (const combo of shortcut('editor.redo').keys) {
      act(() => {
        fireEvent.keyDown(window, keyInit(combo))
      })
      expect(state().doc).toBe(pasted)
      act(() => {
        fireEvent.keyDown(window, keyInit(undo as KeyCombo))
      })
      expect(state().doc).toBe(opened)
    }
    act(() => {
      state().redo()
    })

    // Each delete key removes what is selected: one node per key here.
    for (const combo of shortcut('editor.delete').keys) {
      const before = nodeCount() ?? 0
      const [target] = state().doc?.nodes ?? []
      act(() => {
        state().select({ nodeIds: [target?.id ?? ''] })
      })
      act(() => {
        fireEvent.keyDown(window, keyInit(combo))
      })
      expect(nodeCount()).toBe(before - 1)
    }
  })
})
