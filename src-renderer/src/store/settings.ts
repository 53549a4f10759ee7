import type {
  AppSettings,
  CallbackSecretItem,
  ProfilesView,
  SandboxStatus,
  StorageFigures,
  WebhookItem,
} from '../../../src-shared/domain/settings'
import type { IpcResult } from '../../../src-shared/ipc/result'
import { errorText } from '../shell/errorWords'
import type { SliceWithApi } from './api'
import type { AppState } from './index'

/** What a card shows: what main last said, or why it could not say it. */
export interface Loaded<T> {
  value: T | null
  problem: string | null
}

const empty = <T>(): Loaded<T> => ({ value: null, problem: null })

export interface SettingsSlice {
  settingsProfiles: Loaded<ProfilesView>
  settingsSandbox: Loaded<SandboxStatus>
  settingsWebhooks: Loaded<WebhookItem[]>
  settingsCallbackSecrets: Loaded<CallbackSecretItem[]>
  settingsValues: Loaded<AppSettings>
  settingsStorage: Loaded<StorageFigures>
  /** The mirror is being emptied and refilled: the sync's progress tells how far. */
  mirrorRebuilding: boolean
  /** Reads every card's figures; each card says its own problem (webhooks need the service). */
  loadSettings: () => Promise<void>
  loadWebhooks: () => Promise<void>
  loadCallbackSecrets: () => Promise<void>
  /** After a switch of profile the window's own view of the app is read again. */
  settingsChanged: (profiles: ProfilesView) => void
  setSandboxStatus: (status: SandboxStatus) => void
  setSettingsValues: (values: AppSettings) => void
  setMirrorRebuilding: (rebuilding: boolean) => void
}

/**
 * Profiles are separate worlds: after a switch, nothing the window holds of the profile before
 * may show under the new one. Every list goes at once and the ones the window had read are read
 * again from the profile now in use; what was open (a flow, a run, an evaluation) closes.
 */
function forgetProfile(get: () => AppState, set: (partial: Partial<AppState>) => void): void {
  const state = get()
  const hadRuns = state.runRows !== null
  const hadEvaluations = state.evaluationRows !== null
  const hadAssets = state.assetItems.length > 0 || state.assetTree !== null
  state.closeRun()
  state.closeEvaluation()
  set({
    runRows: null,
    runsTotal: null,
    runsProblem: null,
    runFilterOptions: null,
    checkedRunIds: [],
    compareRunIds: null,
    evaluationRows: null,
    evaluationsProblem: null,
    assetItems: [],
    assetSelection: [],
    assetDetail: null,
    assetTree: null,
    account: null,
  })
  void state.forgetFlows()
  if (hadRuns) void state.loadRuns()
  if (hadEvaluations) void state.loadEvaluations()
  if (hadAssets) {
    void state.loadAssets()
    void state.loadAssetFolders()
  }
}

function loaded<T>(result: IpcResult<T>): Loaded<T> {
  return result.ok
    ? { value: result.value, problem: null }
    : { value: null, problem: errorText(result.error) }
}

export const createSettingsSlice: SliceWithApi<SettingsSlice> = (api) => (set, get) => ({
  settingsProfiles: empty(),
  settingsSandbox: empty(),
  settingsWebhooks: empty(),
  settingsCallbackSecrets: empty(),
  settingsValues: empty(),
  settingsStorage: empty(),
  mirrorRebuilding: false,
  loadSettings: async () => {
    const atelier = api()
    if (!atelier) return
    const [profiles, sandbox, values, storage] = await Promise.all([
      atelier.profiles.list(),
      atelier.sandbox.status(),
      atelier.settings.get(),
      atelier.settings.storage(),
    ])
    set({
      settingsProfiles: loaded(profiles),
      settingsSandbox: loaded(sandbox),
      settingsValues: loaded(values),
      settingsStorage: loaded(storage),
    })
    await Promise.all([get().loadWebhooks(), get().loadCallbackSecrets()])
  },
  loadWebhooks: async () => {
    const atelier = api()
    if (!atelier) return
    set({ settingsWebhooks: loaded(await atelier.webhooks.list()) })
  },
  loadCallbackSecrets: async () => {
    const atelier = api()
    if (!atelier) return
    set({ settingsCallbackSecrets: loaded(await atelier.callbackSecrets.list()) })
  },
  settingsChanged: (profiles) => {
    const before = get().settingsProfiles.value
    set({ settingsProfiles: { value: profiles, problem: null } })
    if (before !== null && before.inUse !== profiles.inUse) forgetProfile(get, set)
    // The sidebar's badge, the account and every card follow the service now in use.
    void get().loadAppInfo()
    void get().loadAccount()
    void get().loadSettings()
  },
  setSandboxStatus: (status) => {
    set({ settingsSandbox: { value: status, problem: null } })
  },
  setSettingsValues: (values) => {
    set({ settingsValues: { value: values, problem: null } })
  },
  setMirrorRebuilding: (rebuilding) => {
    set({ mirrorRebuilding: rebuilding })
  },
})
