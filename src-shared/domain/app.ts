/** Which service the app talks to, as the window may see it: never a key. */
export interface BackendInfo {
  /** `sandbox`: the built-in local implementation, no account needed; `service`: a profile's service. */
  kind: 'sandbox' | 'service'
  /** What the user sees, e.g. "Local sandbox". */
  label: string
  url: string
}

/** What the shell shows about the running app. */
export interface AppInfo {
  name: string
  version: string
  /** `electron` in the desktop window, `web` in the browser mode. */
  shell: 'electron' | 'web'
  platform: string
  /** Null while the backend is starting, or when it could not start (a notice says why). */
  backend: BackendInfo | null
}

/**
 * Who the app works as, for the sidebar: the profile, its organization and what credit is left.
 * Never a key.
 */
export interface AccountSummary {
  /** The profile in use; null on the local sandbox, which needs none. */
  profileName: string | null
  /** `name` is null until the service has told it (offline since Atelier started). */
  organization: { id: string; name: string | null } | null
  /** Micro-credits; null when the service cannot be reached or would not say. */
  balanceMicro: number | null
  backendKind: BackendInfo['kind']
}
