import type { StateCreator } from 'zustand'
import type { AppState } from './index'

export type ThemeChoice = 'system' | 'light' | 'dark'

export interface ThemeSlice {
  theme: ThemeChoice
  setTheme: (theme: ThemeChoice) => void
}

const STORAGE_KEY = 'atelier.theme'

function savedTheme(): ThemeChoice {
  const saved = localStorage.getItem(STORAGE_KEY)
  return saved === 'light' || saved === 'dark' ? saved : 'system'
}

export const createThemeSlice: StateCreator<AppState, [], [], ThemeSlice> = (set) => ({
  theme: savedTheme(),
  setTheme: (theme) => {
    localStorage.setItem(STORAGE_KEY, theme)
    set({ theme })
  },
})
