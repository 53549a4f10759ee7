import type { BackendInfo } from '../../src-shared/domain/app'

/**
 * The service a core talks to: the embedded sandbox or a profile's service, which the
 * workspace (`src-main/workspace`) opens. The key stays here, in the main process.
 */
export interface Backend {
  info: BackendInfo
  apiKey: string
  organizationId: string
  /**
   * The name the mirror files this backend's sync cursors under: the profile's name, or
   * `SANDBOX_PROFILE`, which no profile can take (":" is not allowed in profile names).
   */
  profile: string
  close: () => Promise<void>
}
