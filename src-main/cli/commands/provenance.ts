import type { Command } from 'commander'
import type { CommandContext } from '../context'

export function registerProvenance(program: Command, context: CommandContext): void {
  program
    .command('provenance')
    .description('show where a picture came from: the record inside a file, or of a run or asset')
    .argument('<file-or-id>', 'a PNG, WebP or JPEG file, or a run id or asset id')
    .addHelpText(
      'after',
      '\nA file whose record is damaged or not Atelier’s exits 1; a file that cannot be read exits 2.',
    )
    .action(async (target: string) => {
      const { provenance } = await import('../actions/provenance')
      await provenance(context, target)
    })
}
