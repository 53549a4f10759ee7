import type { PaletteItem } from '../../../src-shared/domain/flow-editor'

/** The drag payload's type: a palette entry dropped on the canvas. */
export const PALETTE_MIME = 'application/x-atelier-palette-item'

/** What identifies a palette entry: its kind and what it runs. */
export const paletteKey = (item: Pick<PaletteItem, 'kind' | 'target'>) =>
  `${item.kind}:${item.target}`
