import { InvalidArgumentError, type Command } from 'commander'
import type { FaultRule, faultRulesSchema } from '../../sandbox/admin-schemas'
import type { SandboxFlags } from '../actions/sandbox'
import type { CommandContext } from '../context'

function integer(name: string, min: number, max: number) {
  return (value: string): number => {
    const parsed = Number(value)
    if (!Number.isInteger(parsed) || parsed < min || parsed > max) {
      throw new InvalidArgumentError(`${name} must be a whole number from ${min} to ${max}.`)
    }
    return parsed
  }
}

function faultRules(value: string, schema: typeof faultRulesSchema | undefined): FaultRule[] {
  let json: unknown
  try {
    json = JSON.parse(value)
  } catch {
    throw new InvalidArgumentError('--faults takes a JSON array of fault rules.')
  }
  if (schema === undefined) throw new Error('The schema of --faults was not loaded.')
  const parsed = schema.safeParse(json)
  if (!parsed.success) {
    throw new InvalidArgumentError(
      `--faults is not valid: ${parsed.error.issues.map((i) => `${i.path.join('.')} ${i.message}`).join('; ')}`,
    )
  }
  return parsed.data
}

/** Whether a command line may hold --faults, as `--faults <json>` or `--faults=<json>`. */
const namesFaults = (arg: string) => arg === '--faults' || arg.startsWith('--faults=')

export function registerSandbox(program: Command, context: CommandContext): void {
  // The schema of --faults is zod, slow to load: it is loaded before `sandbox` parses its
  // options, and only when --faults is given, since commander's option parsers cannot wait.
  let schema: typeof faultRulesSchema | undefined
  const sandbox = program
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
    .option('--faults <json>', 'fault rules to start with (JSON array; see the README)', (value) =>
      faultRules(value, schema),
    )
    .option(
      '--seed-runs <n>',
      'fill the main organization with a history over the last 90 days: this many finished runs, plus one evaluation per 4 runs (at most 25,000; most about the runs, some failed, rated or re-evaluated) and one asset per 10 runs (at most 5,000, images and some videos in a folder tree)',
      integer('--seed-runs', 0, 1_000_000),
      0,
    )
    .action(async (flags: SandboxFlags) => {
      // Loaded here so that other commands do not pay for Fastify and sharp at start-up.
      const { serveSandbox } = await import('../actions/sandbox')
      await serveSandbox(context, flags)
    })
  program.hook('preSubcommand', (_program, command) => {
    if (command !== sandbox || !program.args.some(namesFaults)) return
    return import('../../sandbox/admin-schemas').then((schemas) => {
      schema = schemas.faultRulesSchema
    })
  })
}
