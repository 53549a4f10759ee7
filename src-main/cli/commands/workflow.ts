import type { Command } from 'commander'
import type { WorkflowImportFlags } from '../actions/workflow'
import type { CommandContext } from '../context'

export function registerWorkflow(program: Command, context: CommandContext): void {
  const workflow = program
    .command('workflow')
    .description('workflows of the workflow engine (ComfyUI): import one from a file')
  workflow
    .command('import')
    .description(
      'import a ComfyUI workflow (JSON in the API or editor form, or a PNG/WebP ComfyUI saved)',
    )
    .argument('<file>', 'the workflow file')
    .option('--name <name>', "the workflow's name (default: the file's name in words)")
    .action(async (file: string, flags: WorkflowImportFlags) => {
      const { importWorkflow } = await import('../actions/workflow')
      await importWorkflow(context, file, flags)
    })
}
