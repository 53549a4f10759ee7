import type { BackendInfo } from '../../src-shared/domain/app'

/** The service the app talks to. The key stays here, in the main process. */
export interface Backend {
  info: BackendInfo
  apiKey: string
  organizationId: string
  close: () => Promise<void>
}

/**
 * With no profile, Atelier runs the sandbox in-process on a free loopback port, its data kept
 * under the app's home, so a new user can try everything with no account and no cost.
 */
export async function startLocalSandbox(dataDir: string): Promise<Backend> {
  // Loaded on demand: Fastify and sharp are only needed when the sandbox is the backend.
  const { startSandbox } = await import('../sandbox')
  const sandbox = await startSandbox({ dataDir, port: 0 })
  return {
    info: { kind: 'sandbox', label: 'Local sandbox', url: sandbox.url },
    apiKey: sandbox.keys.admin,
    organizationId: sandbox.orgId,
    close: () => sandbox.close(),
  }
}
