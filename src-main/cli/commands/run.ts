import type { Command } from 'commander'
import { EXIT } from '../exit-codes'
import type { RunFlags } from '../actions/run'
import type { CommandContext } from '../context'
import { CliError } from '../errors'

export function registerRun(program: Command, context: CommandContext): void {
  const collect = (value: string, previous: string[]) => [...previous, value]
  program
    .command('run')
    .description(
      'run a flow (a flow file, a flow id or a slug) on this machine, or the flow that made a picture',
    )
    .argument(
      '<flow>',
      'a flow file path, a flow id, a flow slug, or a picture Atelier wrote (runs its flow again with its inputs and seeds)',
    )
    .option('--input <name=value>', 'a flow input; name=@path reads a file', collect, [])
    .option('--concurrency <n>', 'node runs at once (default 8)')
    .option('--fail-fast', 'cancel everything on the first failure', false)
    .option('--force <node...>', 'run these nodes (label, id or slug) again even when cached', [])
    .option('--resume <flow-run-id>', 'resume an interrupted flow run')
    .option(
      '--out <dir>',
      'write each output that is a file into DIR as <flow-slug>-<output>-<n>.<ext>, with its record inside (PNG, WebP, JPEG); a name already taken is never overwritten: -2, -3… is added',
    )
    .action(async (ref: string, flags: RunFlags) => {
      const concurrency = flags.concurrency === undefined ? undefined : Number(flags.concurrency)
      if (concurrency !== undefined && (!Number.isInteger(concurrency) || concurrency < 1)) {
        throw new CliError(
          `--concurrency takes a whole number of 1 or more, not ${flags.concurrency}.`,
          EXIT.usage,
          'USAGE',
        )
      }
      const { run } = await import('../actions/run')
      await run(context, ref, flags, concurrency)
    })
}
