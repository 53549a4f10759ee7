import { temporal } from 'zundo'
import { create } from 'zustand'
import { createAccountSlice, type AccountSlice } from './account'
import type { ApiSource } from './api'
import { createAppInfoSlice, type AppInfoSlice } from './appInfo'
import { createAssetsSlice, type AssetsSlice } from './assets'
import { createBackgroundSlice, type BackgroundSlice } from './background'
import { createEditorCheckSlice, type EditorCheckSlice } from './editorCheck'
import { createEditorDocumentSlice, type EditorDocumentSlice } from './editorDocument'
import { EDITOR_HISTORY } from './editorHistory'
import { createEditorPersistenceSlice, type EditorPersistenceSlice } from './editorPersistence'
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
import { createUploadsSlice, type UploadsSlice } from './uploads'

export type AppState = NavigationSlice &
  AssetsSlice &
  UploadsSlice &
  EvaluationsSlice &
  AppInfoSlice &
  ThemeSlice &
  SyncSlice &
  FlowListSlice &
  EditorDocumentSlice &
  EditorPersistenceSlice &
  EditorCheckSlice &
  EditorRunSlice &
  AccountSlice &
  OverlaySlice &
  ToastSlice &
  BackgroundSlice &
  RunsSlice &
  SettingsSlice &
  RunPageSlice

/**
 * An app store talking to the main process through `api`. The window has one (`useAppStore`);
 * a test makes its own over its double of the transport.
 */
export const createAppStore = (api: ApiSource) =>
  create<AppState>()(
    // Undo and redo: the flow editor's document only (EDITOR_HISTORY picks it).
    temporal(
      (...a) => ({
        ...createNavigationSlice(...a),
        ...createAssetsSlice(api)(...a),
        ...createUploadsSlice(api)(...a),
        ...createEvaluationsSlice(api)(...a),
        ...createAppInfoSlice(api)(...a),
        ...createThemeSlice(...a),
        ...createSyncSlice(api)(...a),
        ...createFlowListSlice(api)(...a),
        // Before the check and the run: the autosave hears a changed document first.
        ...createEditorDocumentSlice(...a),
        ...createEditorPersistenceSlice(api)(...a),
        ...createEditorCheckSlice(api)(...a),
        ...createEditorRunSlice(api)(...a),
        ...createAccountSlice(api)(...a),
        ...createOverlaySlice(...a),
        ...createToastSlice(...a),
        ...createBackgroundSlice(api)(...a),
        ...createRunsSlice(api)(...a),
        ...createSettingsSlice(api)(...a),
        ...createRunPageSlice(api)(...a),
      }),
      EDITOR_HISTORY,
    ),
  )

export type AppStore = ReturnType<typeof createAppStore>

/**
 * The window's store, over the bridge the page has: the preload's, the browser mode's (installed
 * before the app's modules run) or a test's. Read at each call, so a bridge set later is heard.
 * With none (a page opened without it), each slice says the page is not connected.
 */
export const useAppStore = createAppStore(() => window.atelier ?? null)

export { SECTIONS, type Section } from './navigation'
export type { ThemeChoice } from './theme'
export type { AppNotice } from './sync'
export type { FlowListProblem } from './flows'
export type { EditMerge, EditorSelection } from './editorDocument'
export type { OpenFlow, SaveStatus } from './editorPersistence'
export { TYPING_MERGE_MS } from './editorDocument'
export type { RunOptions, RunPhase } from './editorRuns'
export type { Overlay } from './overlays'
export type { Toast, ToastAction, ToastInput, ToastTone } from './toasts'
export { MAX_TOASTS, TOAST_LONG_MS, TOAST_MS } from './toasts'
