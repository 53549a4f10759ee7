import { create } from 'zustand'
import { createAppInfoSlice, type AppInfoSlice } from './appInfo'
import { createNavigationSlice, type NavigationSlice } from './navigation'
import { createSyncSlice, type SyncSlice } from './sync'
import { createThemeSlice, type ThemeSlice } from './theme'

export type AppState = NavigationSlice & AppInfoSlice & ThemeSlice & SyncSlice

export const useAppStore = create<AppState>()((...a) => ({
  ...createNavigationSlice(...a),
  ...createAppInfoSlice(...a),
  ...createThemeSlice(...a),
  ...createSyncSlice(...a),
}))

export { SECTIONS, type Section } from './navigation'
export type { ThemeChoice } from './theme'
export type { AppNotice } from './sync'
