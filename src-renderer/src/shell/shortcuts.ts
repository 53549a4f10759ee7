import { SECTIONS, type Section } from '../store'
import { SECTION_COPY } from './sections'

/**
 * Every keyboard shortcut of the app, in one table: the help sheet lists it, the shell's key
 * handler matches against it, and the renderer tests press each combination and check that it
 * does what the sheet says (also for the ones the editor and the sync area handle themselves).
 */

/** One key combination; `mod` is Ctrl, or ⌘ on a Mac (either is taken anywhere). */
export interface KeyCombo {
  /** `KeyboardEvent.key`; letters in lower case. */
  key: string
  mod?: boolean
  /** Left out: the key must come without Shift; `any`: a key Shift types on some layouts (?). */
  shift?: boolean | 'any'
}

export type ShortcutGroup = 'Anywhere' | 'Flow editor' | 'Command palette'

export interface Shortcut {
  id: string
  group: ShortcutGroup
  /** What it does, as the help sheet says it. */
  label: string
  /** Any of these; the first is the one a menu or a button's title shows. */
  keys: readonly KeyCombo[]
}

const sectionShortcuts = SECTIONS.map((section, index) => ({
  id: `section.${section}` as const,
  group: 'Anywhere' as const,
  label: `Go to ${SECTION_COPY[section].title}`,
  keys: [{ key: String(index + 1), mod: true }],
})) satisfies Shortcut[]

export const SHORTCUTS = [
  {
    id: 'palette',
    group: 'Anywhere',
    label: 'Open the command palette: jump to a flow, a run, an asset or an action',
    keys: [{ key: 'k', mod: true }],
  },
  {
    id: 'help',
    group: 'Anywhere',
    label: 'Show these shortcuts',
    keys: [
      { key: '?', shift: 'any' },
      { key: '/', mod: true },
    ],
  },
  ...sectionShortcuts,
  { id: 'sync', group: 'Anywhere', label: 'Sync now', keys: [{ key: 'F5' }] },
  {
    id: 'runs.search',
    group: 'Anywhere',
    label: 'Search the runs (in Runs)',
    keys: [{ key: 'f', mod: true }],
  },
  {
    id: 'evaluations.back',
    group: 'Anywhere',
    label: 'Back to the list (on an evaluation)',
    keys: [{ key: 'Escape' }],
  },
  { id: 'editor.undo', group: 'Flow editor', label: 'Undo', keys: [{ key: 'z', mod: true }] },
  {
    id: 'editor.redo',
    group: 'Flow editor',
    label: 'Redo',
    keys: [
      { key: 'z', mod: true, shift: true },
      { key: 'y', mod: true },
    ],
  },
  {
    id: 'editor.copy',
    group: 'Flow editor',
    label: 'Copy the selected nodes',
    keys: [{ key: 'c', mod: true }],
  },
  {
    id: 'editor.paste',
    group: 'Flow editor',
    label: 'Paste the copied nodes',
    keys: [{ key: 'v', mod: true }],
  },
  {
    id: 'editor.delete',
    group: 'Flow editor',
    label: 'Delete the selected nodes and links',
    keys: [{ key: 'Delete' }, { key: 'Backspace' }],
  },
  {
    id: 'editor.group',
    group: 'Flow editor',
    label: 'Group the selected nodes in a labelled frame',
    keys: [{ key: 'g', mod: true }],
  },
  {
    id: 'editor.ungroup',
    group: 'Flow editor',
    label: 'Ungroup: remove the selected group’s frame, keeping its nodes',
    keys: [{ key: 'g', mod: true, shift: true }],
  },
  {
    id: 'palette.move',
    group: 'Command palette',
    label: 'Move through the results',
    keys: [{ key: 'ArrowDown' }, { key: 'ArrowUp' }],
  },
  {
    id: 'palette.choose',
    group: 'Command palette',
    label: 'Open the chosen result',
    keys: [{ key: 'Enter' }],
  },
  {
    id: 'close',
    group: 'Command palette',
    label: 'Close the palette or this sheet',
    keys: [{ key: 'Escape' }],
  },
] as const satisfies readonly Shortcut[]

export type ShortcutId = (typeof SHORTCUTS)[number]['id']

export const sectionShortcutId = (section: Section) => `section.${section}` as const

export function shortcut(id: ShortcutId): Shortcut {
  const found = SHORTCUTS.find((entry) => entry.id === id)
  if (!found) throw new Error(`There is no shortcut "${id}".`)
  return found
}

/** Whether the keyboard event is one of the shortcut's combinations. */
export function matches(id: ShortcutId, event: KeyboardEvent): boolean {
  if (event.altKey) return false
  const mod = event.ctrlKey || event.metaKey
  const key = event.key.length === 1 ? event.key.toLowerCase() : event.key
  return shortcut(id).keys.some(
    (combo: KeyCombo) =>
      combo.key === key &&
      (combo.mod ?? false) === mod &&
      (combo.shift === 'any' || (combo.shift ?? false) === event.shiftKey),
  )
}

/** The first shortcut of the list that the event is, if any. */
export function shortcutOf(event: KeyboardEvent, among: readonly ShortcutId[]): ShortcutId | null {
  return among.find((id) => matches(id, event)) ?? null
}

const KEY_NAMES: Record<string, string> = {
  ArrowDown: '↓',
  ArrowUp: '↑',
  Escape: 'Esc',
  Backspace: 'Backspace',
  Delete: 'Delete',
  Enter: 'Enter',
}

export const isMac = (): boolean =>
  typeof navigator !== 'undefined' && /Mac|iPhone|iPad/.test(navigator.userAgent)

/** The keys of a combination as they are pressed: ["Ctrl", "K"], or ["⌘", "K"] on a Mac. */
export function comboKeys(combo: KeyCombo, mac = isMac()): string[] {
  const keys: string[] = []
  // Each platform's own order: ⇧⌘Z on a Mac, Ctrl+Shift+Z elsewhere.
  if (mac) {
    if (combo.shift === true) keys.push('⇧')
    if (combo.mod) keys.push('⌘')
  } else {
    if (combo.mod) keys.push('Ctrl')
    if (combo.shift === true) keys.push('Shift')
  }
  keys.push(KEY_NAMES[combo.key] ?? (combo.key.length === 1 ? combo.key.toUpperCase() : combo.key))
  return keys
}

/** "Ctrl+K": for a title or a hint next to an action. */
export function comboLabel(combo: KeyCombo, mac = isMac()): string {
  return comboKeys(combo, mac).join(mac ? '' : '+')
}

/** The shortcut's first combination, as a hint: "Ctrl+K". */
export function shortcutHint(id: ShortcutId, mac = isMac()): string {
  const [first] = shortcut(id).keys
  return first ? comboLabel(first, mac) : ''
}

/** The shortcuts the shell's own key handler acts on (`useShellKeys`), wherever the focus is. */
export const SHELL_SHORTCUTS: readonly ShortcutId[] = [
  'palette',
  'help',
  ...SECTIONS.map(sectionShortcutId),
]

/** The section a section shortcut goes to; null for any other shortcut. */
export function sectionOfShortcut(id: ShortcutId): Section | null {
  return SECTIONS.find((section) => sectionShortcutId(section) === id) ?? null
}

/** Keys typed into a field belong to the field: "?" there is a question mark. */
export function typingInField(target: EventTarget | null): boolean {
  if (!(target instanceof HTMLElement)) return false
  return (
    target.isContentEditable ||
    target instanceof HTMLInputElement ||
    target instanceof HTMLTextAreaElement ||
    target instanceof HTMLSelectElement
  )
}
