import type { StateCreator } from 'zustand'
import type { AppState } from './index'

export const SECTIONS = ['flows', 'assets', 'runs', 'evaluations', 'batches', 'settings'] as const
export type Section = (typeof SECTIONS)[number]

export interface NavigationSlice {
  section: Section
  goTo: (section: Section) => void
}

export const createNavigationSlice: StateCreator<AppState, [], [], NavigationSlice> = (set) => ({
  section: 'flows',
  goTo: (section) => {
    set({ section })
  },
})
