import { resolve } from 'node:path'
import { startSandbox } from '../../sandbox'
import type { FaultRule } from '../../sandbox/faults'
import type { CommandContext } from '../context'

/** The flags of `atelier sandbox`, parsed and checked by commander. */
export interface SandboxFlags {
  port: number
  data?: string
  latencyMs: number
  faults?: FaultRule[]
  seedRuns: number
}

/** `atelier sandbox`: the sandbox started, its one ready line printed, then kept until a stop. */
export async function serveSandbox(context: CommandContext, flags: SandboxFlags): Promise<void> {
  const sandbox = await startSandbox({
    port: flags.port,
    latencyMs: flags.latencyMs,
    ...(flags.data ? { dataDir: resolve(flags.data) } : {}),
    ...(flags.faults ? { faults: flags.faults } : {}),
  })
  if (flags.seedRuns > 0) {
    // Seeded before the ready line, so that a script that waits for it sees the history.
    const { seedHistory } = await import('../../sandbox/runs')
    const summary = await seedHistory(sandbox.services, sandbox.orgId, flags.seedRuns)
    context.io.stderr(
      `Seeded ${summary.runs} runs (${summary.node_runs} node runs, ${summary.logs} log lines), ${summary.evaluations} evaluations and ${summary.assets} assets in ${summary.asset_folders} folders, in ${(summary.elapsed_ms / 1000).toFixed(1)} s.\n`,
    )
  }
  // Signal handlers go in before the ready line, so a stop right after it is never missed.
  const stopped = new Promise<void>((done) => {
    const stop = () => {
      process.off('SIGINT', stop)
      process.off('SIGTERM', stop)
      void sandbox.close().then(done)
    }
    process.on('SIGINT', stop)
    process.on('SIGTERM', stop)
  })
  // Exactly one JSON line, whatever --json says: scripts wait for it to know the sandbox is up.
  context.io.stdout(
    `${JSON.stringify({ url: sandbox.url, orgId: sandbox.orgId, keys: sandbox.keys })}\n`,
  )
  await stopped
}
