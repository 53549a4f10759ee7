import type { AppInfo } from '../../../src-shared/domain/app'
import { errorText } from '../shell/errorWords'
import type { SliceWithApi } from './api'

export interface AppInfoSlice {
  appInfo: AppInfo | null
  /** Plain-words reason when the main process could not be reached. */
  connectionProblem: string | null
  loadAppInfo: () => Promise<void>
}

export const createAppInfoSlice: SliceWithApi<AppInfoSlice> = (atelier) => (set) => ({
  appInfo: null,
  connectionProblem: null,
  loadAppInfo: async () => {
    const api = atelier()
    if (!api) {
      set({
        connectionProblem:
          'This page is not connected to Atelier. Start it with `npm start` (desktop) or open the link the browser mode prints.',
      })
      return
    }
    const result = await api.app.getInfo()
    if (result.ok) set({ appInfo: result.value, connectionProblem: null })
    else set({ connectionProblem: errorText(result.error) })
  },
})
