import type { BackendInfo } from '../../src-shared/domain/app'
import type { RunningSandbox } from '../sandbox'

/** The service the app talks to. The key stays here, in the main process. */
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

export const SANDBOX_PROFILE = ':sandbox'

/** The backend of a running sandbox: its admin key, in its main organization. */
export function sandboxBackend(sandbox: RunningSandbox): Backend {
  return {
    info: { kind: 'sandbox', label: 'Local sandbox', url: sandbox.url },
    apiKey: sandbox.keys.admin,
    organizationId: sandbox.orgId,
    profile: SANDBOX_PROFILE,
    close: () => sandbox.close(),
  }
}

/**
 * With no profile, Atelier runs the sandbox in-process on a free loopback port, its data kept
 * under the app's home, so a new user can try everything with no account and no cost.
 */
export async function startLocalSandbox(dataDir: string): Promise<Backend> {
  // Loaded on demand: Fastify and sharp are only needed when the sandbox is the backend.
  const { startSandbox } = await import('../sandbox')
  return sandboxBackend(await startSandbox({ dataDir, port: 0 }))
}
