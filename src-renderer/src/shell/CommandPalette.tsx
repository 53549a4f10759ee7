import { Command, defaultFilter } from 'cmdk'
import { useEffect, useState } from 'react'
import { useShallow } from 'zustand/react/shallow'
import type { SearchResultItem } from '../../../src-shared/domain/search'
import { SECTIONS, useAppStore, type Section } from '../store'
import { errorText } from './errorWords'
import { Modal } from './Modal'
import { SECTION_COPY } from './sections'
import { sectionShortcutId, shortcutHint, type ShortcutId } from './shortcuts'

/** Something the palette can do; `value` is unique, for the list's keyboard selection. */
export interface PaletteEntry {
  value: string
  label: string
  /** A shortcut, or what kind of thing it is. */
  hint?: string
  keywords?: string[]
  run: () => void
}

export interface PaletteGroup {
  heading: string
  entries: PaletteEntry[]
}

/** Typing waits this long before the mirror is searched: one search per pause, not per key. */
export const SEARCH_DELAY_MS = 150
const SEARCH_LIMIT = 12
const RECENT_FLOWS = 5
const MATCHING_FLOWS = 20

/** What a found record opens. */
const SECTION_OF: Record<SearchResultItem['kind'], Section> = {
  run: 'runs',
  evaluation: 'evaluations',
  asset: 'assets',
}

const KIND_HEADINGS: { kind: SearchResultItem['kind']; heading: string }[] = [
  { kind: 'run', heading: 'Runs' },
  { kind: 'evaluation', heading: 'Evaluations' },
  { kind: 'asset', heading: 'Assets' },
]

const wordsOf = (text: string) =>
  text
    .toLowerCase()
    .split(/[^\p{L}\p{N}]+/u)
    .filter(Boolean)

/**
 * How well an entry answers what was typed; 0 when it does not. What the person reads comes
 * first: a name that starts with the words, then a name with a word starting with each of them,
 * then a name the fuzzy match finds; an entry found only through its keywords (a template's
 * description) ranks below all of them, however well it scores.
 */
export function paletteScore(entry: Pick<PaletteEntry, 'label' | 'keywords'>, search: string) {
  const typed = search.trim().toLowerCase()
  if (typed === '') return 0
  const fuzzy = defaultFilter(entry.label, typed, entry.keywords)
  if (fuzzy <= 0) return 0
  const label = entry.label.toLowerCase()
  const labelWords = wordsOf(label)
  const nameFuzzy = defaultFilter(entry.label, typed)
  // Within a tier the fuzzy score orders, never enough to reach the tier above.
  if (label.startsWith(typed)) return 3 + fuzzy / 2
  if (wordsOf(typed).every((word) => labelWords.some((w) => w.startsWith(word)))) {
    return 2 + fuzzy / 2
  }
  if (nameFuzzy > 0) return 1 + nameFuzzy / 2
  return fuzzy / 2
}

/** The entries that match the words, best first; all of them, in order, without words. */
export function rank(entries: PaletteEntry[], search: string, limit = Infinity): PaletteEntry[] {
  return scored(entries, search, limit).map(({ entry }) => entry)
}

function scored(entries: PaletteEntry[], search: string, limit = Infinity) {
  if (search.trim() === '') return entries.slice(0, limit).map((entry) => ({ entry, score: 0 }))
  return entries
    .map((entry, index) => ({ entry, index, score: paletteScore(entry, search) }))
    .filter(({ score }) => score > 0)
    .sort((a, b) => b.score - a.score || a.index - b.index)
    .slice(0, limit)
}

/**
 * The groups for typed words, each ranked, the group with the best match first (ties keep the
 * given order): "theme" lists the theme action before a template that mentions a theme.
 */
export function rankGroups(
  groups: { heading: string; entries: PaletteEntry[]; limit?: number }[],
  search: string,
): PaletteGroup[] {
  return groups
    .map((group, index) => {
      const found = scored(group.entries, search, group.limit)
      return {
        index,
        best: found[0]?.score ?? 0,
        group: { heading: group.heading, entries: found.map(({ entry }) => entry) },
      }
    })
    .sort((a, b) => b.best - a.best || a.index - b.index)
    .map(({ group }) => group)
}

/** A free name for a new flow: "Untitled flow", then "Untitled flow 2"… */
export function untitledName(taken: readonly string[]): string {
  const names = new Set(taken)
  const base = 'Untitled flow'
  if (!names.has(base)) return base
  for (let n = 2; ; n++) if (!names.has(`${base} ${n}`)) return `${base} ${n}`
}

function resultHint(item: SearchResultItem): string {
  switch (item.kind) {
    case 'run':
      return [item.status, item.model].filter(Boolean).join(' · ')
    case 'evaluation':
      return item.verdict ?? item.status ?? ''
    case 'asset':
      return item.folderPath ?? item.mediaType
  }
}

interface Found {
  text: string
  items: SearchResultItem[]
  problem: string | null
}

/** The mirror's records matching the words, searched once typing pauses. */
function useMirrorSearch(search: string): Found {
  const [found, setFound] = useState<Found>({ text: '', items: [], problem: null })
  useEffect(() => {
    const text = search.trim()
    let live = true
    const timer = setTimeout(
      () => {
        const api = window.atelier
        if (text === '' || !api) {
          setFound({ text, items: [], problem: null })
          return
        }
        void api.search.query({ text, limit: SEARCH_LIMIT }).then((result) => {
          if (!live) return
          setFound(
            result.ok
              ? { text, items: result.value.items, problem: null }
              : { text, items: [], problem: errorText(result.error) },
          )
        })
      },
      text === '' ? 0 : SEARCH_DELAY_MS,
    )
    return () => {
      live = false
      clearTimeout(timer)
    }
  }, [search])
  return found
}

const prefersDark = () => window.matchMedia('(prefers-color-scheme: dark)').matches

/** The palette's groups for what was typed, in the order they are listed. */
function usePaletteGroups(search: string, found: Found, close: () => void): PaletteGroup[] {
  const { theme, flowList } = useAppStore(
    useShallow((s) => ({ theme: s.theme, flowList: s.flows })),
  )
  // The actions read the store when chosen, not when listed.
  const state = useAppStore.getState()
  const hint = (id: ShortcutId) => shortcutHint(id)
  const dark = theme === 'dark' || (theme === 'system' && prefersDark())
  const act = (run: () => void) => () => {
    close()
    run()
  }

  const sections: PaletteEntry[] = SECTIONS.map((section) => ({
    value: `section:${section}`,
    label: `Go to ${SECTION_COPY[section].title}`,
    hint: hint(sectionShortcutId(section)),
    keywords: [SECTION_COPY[section].title],
    run: act(() => {
      state.goTo(section)
    }),
  }))

  const actions: PaletteEntry[] = [
    {
      value: 'action:new-flow',
      label: 'New flow',
      keywords: ['create', 'add'],
      run: act(() => {
        state.goTo('flows')
        const name = untitledName((flowList ?? []).map((flow) => flow.name))
        void state.createFlow(name).then((created) => {
          if (created) void state.openFlow(created.id)
        })
      }),
    },
    {
      value: 'action:sync',
      label: 'Sync now',
      hint: 'F5',
      keywords: ['refresh', 'update'],
      run: act(() => {
        void state.requestSync()
      }),
    },
    {
      value: 'action:theme',
      label: dark ? 'Switch to the light theme' : 'Switch to the dark theme',
      keywords: ['theme', 'appearance', 'dark', 'light', 'mode'],
      run: act(() => {
        state.setTheme(dark ? 'light' : 'dark')
      }),
    },
    {
      value: 'action:shortcuts',
      label: 'Show keyboard shortcuts',
      hint: hint('help'),
      keywords: ['help', 'keys', 'keyboard'],
      run: () => {
        state.openOverlay('shortcuts')
      },
    },
  ]

  const flows: PaletteEntry[] = (flowList ?? []).map((flow) => ({
    value: `flow:${flow.id}`,
    label: flow.name,
    hint:
      flow.source === 'local' ? 'Flow' : flow.source === 'service' ? 'Service flow' : 'Template',
    keywords: flow.description ? [flow.description] : [],
    run: act(() => {
      state.goTo('flows')
      void state.openFlow(flow.id)
    }),
  }))

  const searching = search.trim() !== ''
  const groups: PaletteGroup[] = searching
    ? rankGroups(
        [
          { heading: 'Flows', entries: flows, limit: MATCHING_FLOWS },
          { heading: 'Go to', entries: sections },
          { heading: 'Actions', entries: actions },
        ],
        search,
      )
    : [
        { heading: 'Actions', entries: actions },
        { heading: 'Go to', entries: sections },
        { heading: 'Recent flows', entries: flows.slice(0, RECENT_FLOWS) },
      ]
  // A found record opens in its section: the run's page, the evaluation's page, the asset's
  // details.
  if (searching && found.text === search.trim()) {
    for (const { kind, heading } of KIND_HEADINGS) {
      groups.push({
        heading,
        entries: found.items
          .filter((item) => item.kind === kind)
          .map((item) => ({
            value: `${kind}:${item.id}`,
            label: item.title,
            hint: resultHint(item),
            run: act(() => {
              state.goTo(SECTION_OF[kind])
              if (kind === 'run') state.openRun(item.id)
              else if (kind === 'evaluation') void state.openEvaluation(item.id)
              else void state.openAsset(item.id)
            }),
          })),
      })
    }
  }
  return groups.filter((group) => group.entries.length > 0)
}

function PaletteDialog() {
  const closeOverlay = useAppStore((s) => s.closeOverlay)
  const loadFlows = useAppStore((s) => s.loadFlows)
  const [search, setSearch] = useState('')
  const found = useMirrorSearch(search)
  const groups = usePaletteGroups(search, found, closeOverlay)

  // The list may have changed since it was last shown (synced, made in another window).
  useEffect(() => {
    void loadFlows()
  }, [loadFlows])

  return (
    <Modal label="Command palette" className="palette" onClose={closeOverlay}>
      <Command label="Command palette" shouldFilter={false} loop vimBindings={false}>
        <Command.Input
          value={search}
          onValueChange={setSearch}
          placeholder="Search flows, runs, assets and actions…"
        />
        <Command.List>
          <Command.Empty>
            {search.trim() !== '' && found.text !== search.trim()
              ? 'Searching…'
              : `Nothing matches “${search.trim()}”.`}
          </Command.Empty>
          {groups.map((group) => (
            <Command.Group key={group.heading} heading={group.heading}>
              {group.entries.map((entry) => (
                <Command.Item key={entry.value} value={entry.value} onSelect={entry.run}>
                  <span className="palette-label">{entry.label}</span>
                  {entry.hint ? <span className="palette-hint">{entry.hint}</span> : null}
                </Command.Item>
              ))}
            </Command.Group>
          ))}
        </Command.List>
        {found.problem ? (
          <p className="palette-problem" role="alert">
            {found.problem}
          </p>
        ) : null}
      </Command>
    </Modal>
  )
}

/** Ctrl/Cmd+K: jump to any section, flow or found record, or run an action, by typing. */
export function CommandPalette() {
  const open = useAppStore((s) => s.overlay === 'palette')
  return open ? <PaletteDialog /> : null
}
