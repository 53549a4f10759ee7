import { Command } from 'cmdk'
import { useEffect, useMemo, useRef } from 'react'
import { useShallow } from 'zustand/react/shallow'
import type { PaletteItem } from '../../../src-shared/domain/flow-editor'
import { useAppStore } from '../store'
import { paletteKey, PALETTE_MIME } from './paletteDrag'
import { usePlaceInView } from './placeInView'
import { creditsWords } from './words'

/** The palette: searchable, grouped by category, each entry with its price per run. */
export function Palette() {
  const { palette, paletteProblem, readOnly, openFlowId, loadPalette, addPaletteNode } =
    useAppStore(
      useShallow((s) => ({
        palette: s.palette,
        paletteProblem: s.paletteProblem,
        readOnly: s.editor?.readOnly ?? true,
        openFlowId: s.editor?.id ?? null,
        loadPalette: s.loadPalette,
        addPaletteNode: s.addPaletteNode,
      })),
    )
  const placeInView = usePlaceInView()
  // Models, workflows and flows come from the mirror: a sync that ended after the palette was
  // read (the first one, on a new profile) may have brought what it lacked, so it is read again.
  const syncedAt = useAppStore((s) => s.sync?.lastOkAt ?? null)
  const seenSyncAt = useRef(syncedAt)
  useEffect(() => {
    if (syncedAt === seenSyncAt.current) return
    seenSyncAt.current = syncedAt
    if (palette !== null) void loadPalette(true)
  }, [syncedAt, palette, loadPalette])
  const groups = useMemo(() => {
    const byCategory = new Map<string, PaletteItem[]>()
    for (const item of palette ?? []) {
      // A flow cannot be a node of itself (the executor refuses the recursion anyway).
      if (item.kind === 'sub_flow' && item.target === openFlowId) continue
      byCategory.set(item.category, [...(byCategory.get(item.category) ?? []), item])
    }
    return [...byCategory.entries()].sort(([a], [b]) => a.localeCompare(b))
  }, [palette, openFlowId])

  return (
    <aside className="flow-palette" aria-label="Node palette">
      <Command label="Node palette" className="palette-command">
        <Command.Input placeholder="Search nodes…" aria-label="Search nodes" />
        <Command.List className="palette-list">
          {palette === null && !paletteProblem ? (
            <Command.Loading>Loading the palette…</Command.Loading>
          ) : null}
          {paletteProblem ? (
            <div className="palette-problem" role="alert">
              <p>{paletteProblem}</p>
              <button
                type="button"
                className="small-button"
                onClick={() => {
                  void loadPalette(true)
                }}
              >
                Try again
              </button>
            </div>
          ) : null}
          <Command.Empty>No node matches.</Command.Empty>
          {groups.map(([category, items]) => (
            <Command.Group key={category} heading={category}>
              {items.map((item) => (
                <Command.Item
                  key={paletteKey(item)}
                  value={`${item.name} ${paletteKey(item)}`}
                  keywords={[category, item.description ?? '']}
                  className="palette-item"
                  data-testid={`palette-item-${item.name}`}
                  title={item.description ?? item.name}
                  disabled={readOnly}
                  draggable={!readOnly}
                  onDragStart={(event) => {
                    event.dataTransfer.setData(PALETTE_MIME, paletteKey(item))
                    event.dataTransfer.effectAllowed = 'copy'
                  }}
                  onSelect={() => {
                    addPaletteNode(item, placeInView())
                  }}
                >
                  <span className="palette-name">{item.name}</span>
                  <span className="palette-price">
                    {item.priceMicro === null ? 'price varies' : creditsWords(item.priceMicro)}
                  </span>
                </Command.Item>
              ))}
            </Command.Group>
          ))}
        </Command.List>
      </Command>
    </aside>
  )
}
