import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { openCore, type Core } from '../../src-main/core'
import { openLogger } from '../../src-main/log'
import { sandboxBackend } from '../../src-main/workspace'
import type { TestSandbox } from './sandbox'

export interface SyncedCore {
  core: Core
  home: string
  /** Closes the core and removes its home; the sandbox is the test's to stop. */
  close: () => Promise<void>
}

/**
 * The app's real core in a temp home on a test sandbox, synced once. The backend outlives the
 * sandbox (closing it closes nothing), so a test may stop the sandbox and start it again on the
 * same port. `onEvent` hears the core's events from before the first sync.
 */
export async function openSyncedCore(
  sandbox: TestSandbox,
  name: string,
  onEvent?: Parameters<Core['onEvent']>[0],
): Promise<SyncedCore> {
  const home = mkdtempSync(join(tmpdir(), `atelier-${name}-`))
  const logger = openLogger({ home, level: 'info' })
  const core = openCore({
    home,
    logger,
    backend: { ...sandboxBackend(sandbox), close: () => Promise.resolve() },
  })
  const close = async () => {
    await core.close()
    logger.close()
    rmSync(home, { recursive: true, force: true })
  }
  if (onEvent) core.onEvent(onEvent)
  const status = await core.syncNow()
  if (status.last?.outcome !== 'ok') {
    await close()
    throw new Error(`The first sync did not succeed: ${JSON.stringify(status)}`)
  }
  return { core, home, close }
}
