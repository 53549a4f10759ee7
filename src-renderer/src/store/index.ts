import { temporal } from 'zundo'
import { create } from 'zustand'
import { createAccountSlice, type AccountSlice } from './account'
import { createAppInfoSlice, type AppInfoSlice } from './appInfo'
import { createAssetsSlice, type AssetsSlice } from './assets'
import { createBackgroundSlice, type BackgroundSlice } from './background'
import { createEditorSlice, EDITOR_HISTORY, type EditorSlice } from './editor'
import { createEditorCheckSlice, type EditorCheckSlice } from './editorCheck'
import { createEditorRunSlice, type EditorRunSlice } from './editorRuns'
import { createEvaluationsSlice, type EvaluationsSlice } from './evaluations'
import { createFlowListSlice, type FlowListSlice } from './flows'
import { createNavigationSlice, type NavigationSlice } from './navigation'
import { createOverlaySlice, type OverlaySlice } from './overlays'
import { createRunPageSlice, type RunPageSlice } from './runPage'
import { createRunsSlice, type RunsSlice } from './runs'
import { createSettingsSlice, type SettingsSlice } from './settings'
import { createSyncSlice, type SyncSlice } from './sync'
import { createThemeSlice, type ThemeSlice } from './theme'
import { createToastSlice, type ToastSlice } from './toasts'

export type AppState = NavigationSlice &
  AssetsSlice &
  EvaluationsSlice &
  AppInfoSlice &
  ThemeSlice &
  SyncSlice &
  FlowListSlice &
  EditorSlice &
  EditorCheckSlice &
  EditorRunSlice &
  AccountSlice &
  OverlaySlice &
  ToastSlice &
  BackgroundSlice &
  RunsSlice &
  SettingsSlice &
  RunPageSlice

/** The app's store; the window has one (`useAppStore`), a test makes its own. */
export const createAppStore = () =>
  create<AppState>()(
    // Undo and redo: the flow editor's document only (EDITOR_HISTORY picks it).
    temporal(
      (...a) => ({
        ...createNavigationSlice(...a),
        ...createAssetsSlice(...a),
        ...createEvaluationsSlice(...a),
        ...createAppInfoSlice(...a),
        ...createThemeSlice(...a),
        ...createSyncSlice(...a),
        ...createFlowListSlice(...a),
        ...createEditorSlice(...a),
        ...createEditorCheckSlice(...a),
        ...createEditorRunSlice(...a),
        ...createAccountSlice(...a),
        ...createOverlaySlice(...a),
        ...createToastSlice(...a),
        ...createBackgroundSlice(...a),
        ...createRunsSlice(...a),
        ...createSettingsSlice(...a),
        ...createRunPageSlice(...a),
      }),
      EDITOR_HISTORY,
    ),
  )

export type AppStore = ReturnType<typeof createAppStore>

export const useAppStore = createAppStore()

export { SECTIONS, type Section } from './navigation'
export type { ThemeChoice } from './theme'
export type { AppNotice } from './sync'
export type { FlowListProblem } from './flows'
export type { EditMerge, EditorSelection, OpenFlow, SaveStatus } from './editor'
export { TYPING_MERGE_MS } from './editor'
export type { RunOptions, RunPhase } from './editorRuns'
export type { Overlay } from './overlays'
export type { Toast, ToastAction, ToastInput, ToastTone } from './toasts'
export { MAX_TOASTS, TOAST_LONG_MS, TOAST_MS } from './toasts'
