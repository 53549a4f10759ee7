import type { StateCreator } from 'zustand'
import type { AppState } from './index'

/** What covers the page, one at a time: the command palette or the shortcuts sheet. */
export type Overlay = 'palette' | 'shortcuts'

export interface OverlaySlice {
  overlay: Overlay | null
  /** Opens it, closing the other one. */
  openOverlay: (overlay: Overlay) => void
  /** The same key opens and closes: Ctrl+K twice leaves the page as it was. */
  toggleOverlay: (overlay: Overlay) => void
  closeOverlay: () => void
}

export const createOverlaySlice: StateCreator<AppState, [], [], OverlaySlice> = (set, get) => ({
  overlay: null,
  openOverlay: (overlay) => {
    set({ overlay })
  },
  toggleOverlay: (overlay) => {
    set({ overlay: get().overlay === overlay ? null : overlay })
  },
  closeOverlay: () => {
    set({ overlay: null })
  },
})
