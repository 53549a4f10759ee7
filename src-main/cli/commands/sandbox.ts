import { resolve } from 'node:path'
import { InvalidArgumentError, type Command } from 'commander'
import { faultRulesSchema, type FaultRule } from '../../sandbox/faults'
import type { CommandContext } from '../program'

function integer(name: string, min: number, max: number) {
  return (value: string): number => {
    const parsed = Number(value)
    if (!Number.isInteger(parsed) || parsed < min || parsed > max) {
      throw new InvalidArgumentError(`${name} must be a whole number from ${min} to ${max}.`)
    }
    return parsed
  }
}

function faultRules(value: string): FaultRule[] {
  let json: unknown
  try {
    json = JSON.parse(value)
  } catch {
    throw new InvalidArgumentError('--faults takes a JSON array of fault rules.')
  }
  const parsed = faultRulesSchema.safeParse(json)
  if (!parsed.success) {
    throw new InvalidArgumentError(
      `--faults is not valid: ${parsed.error.issues.map((i) => `${i.path.join('.')} ${i.message}`).join('; ')}`,
    )
  }
  return parsed.data
}

interface SandboxFlags {
  port: number
  data?: string
  latencyMs: number
  faults?: FaultRule[]
  seedRuns: number
}

export function registerSandbox(program: Command, context: CommandContext): void {
  program
    .command('sandbox')
    .description(
      'Run the local sandbox: a complete implementation of the service on 127.0.0.1, for trying Atelier with no account.',
    )
    .option('--port <n>', 'port to listen on (0 picks a free one)', integer('--port', 0, 65535), 0)
    .option('--data <dir>', 'keep the sandbox data in this folder (default: a temp folder)')
    .option(
      '--latency-ms <n>',
      'nominal model latency in milliseconds',
      integer('--latency-ms', 0, 600_000),
      300,
    )
    .option('--faults <json>', 'fault rules to start with (JSON array; see the README)', faultRules)
    .option(
      '--seed-runs <n>',
      'fill the main organization with a history over the last 90 days: this many finished runs, plus one evaluation per 4 runs (at most 25,000; most about the runs, some failed, rated or re-evaluated) and one asset per 10 runs (at most 5,000, images and some videos in a folder tree)',
      integer('--seed-runs', 0, 1_000_000),
      0,
    )
    .action(async (flags: SandboxFlags) => {
      // Loaded here so that other commands do not pay for Fastify and sharp at start-up.
      const { startSandbox } = await import('../../sandbox')
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
    })
}
