import { readFileSync } from 'node:fs'
import { basename, resolve } from 'node:path'
import { openDatabases } from '../../db'
import {
  importSummary,
  importWorkflowFile,
  isWorkflowImportError,
  parseComfyFile,
  type ImportedWorkflow,
} from '../../workflows'
import { connect } from '../connect'
import type { CommandContext } from '../context'
import { CliError } from '../errors'
import { EXIT } from '../exit-codes'
import { organizationOf } from '../organization'

/** The flags of `atelier workflow import`, as commander hands them over. */
export interface WorkflowImportFlags {
  name?: string
}

/** The file's problems are the person's to fix (exit 2); the service's refusal is a failure. */
const USAGE_CODES = new Set(['NOT_A_WORKFLOW', 'NO_WORKFLOW_IN_PICTURE'])

function asCliError(error: unknown): unknown {
  if (!isWorkflowImportError(error)) return error
  return new CliError(
    error.message,
    USAGE_CODES.has(error.code) ? EXIT.usage : EXIT.failed,
    error.code,
  )
}

const shown = (value: unknown): string => {
  if (value === undefined || value === null) return '(none)'
  const text = JSON.stringify(value)
  return text.length > 60 ? `${text.slice(0, 57)}...` : text
}

function textOf(imported: ImportedWorkflow): string {
  const { workflow, notExposed } = imported
  const lines = [
    `Imported ${JSON.stringify(workflow.name)}: ${importSummary(imported)}.`,
    `  id   ${workflow.id}`,
    `  slug ${workflow.slug}`,
    'Inputs:',
    ...workflow.inputs.map(
      (input) =>
        `  ${input.name} (${input.display_name ?? input.name}, ${input.variable_type_code})${
          input.is_required ? ' required' : ` default ${shown(input.default_value)}`
        }`,
    ),
    'Outputs:',
    ...workflow.outputs.map(
      (output) =>
        `  ${output.name} (${output.display_name ?? output.name}, ${output.variable_type_code})`,
    ),
  ]
  if (notExposed.length > 0) {
    lines.push('Not exposed (custom nodes, kept in the workflow as they are):')
    for (const node of notExposed) lines.push(`  node ${node.nodeId}: ${node.classType}`)
  }
  const prompt = workflow.inputs.find((input) => input.name === 'prompt')
  lines.push(`Run it: atelier run ${workflow.slug}${prompt ? ' --input prompt="..."' : ''}`)
  return lines.join('\n')
}

/**
 * `atelier workflow import FILE`: the ComfyUI file made a workflow of the organization, with
 * the inputs and outputs chosen from its graph, and kept in the mirror for the palette.
 */
export async function importWorkflow(
  context: CommandContext,
  file: string,
  flags: WorkflowImportFlags,
): Promise<void> {
  let bytes: Uint8Array
  try {
    bytes = readFileSync(resolve(file))
  } catch {
    throw new CliError(`${file} cannot be read; check the path.`, EXIT.usage, 'USAGE')
  }
  const fileName = basename(file)
  // A file that is no workflow is told before any profile or service is needed.
  try {
    parseComfyFile(bytes, fileName)
  } catch (error) {
    throw asCliError(error)
  }
  const globals = context.globals()
  const { profile, client, logger } = await connect(context, { command: 'workflow import' })
  const dbs = openDatabases(globals.home)
  try {
    const orgId = await organizationOf(client, profile.organization_id)
    const imported = await importWorkflowFile(
      { client, mirror: dbs.mirror, orgId },
      { bytes, fileName, name: flags.name },
    ).catch((error: unknown) => {
      throw asCliError(error)
    })
    logger.info('workflow imported', {
      workflowId: imported.workflow.id,
      notExposed: imported.notExposed.length,
    })
    const { workflow, notExposed } = imported
    context.print(
      {
        id: workflow.id,
        slug: workflow.slug,
        name: workflow.name,
        inputs: workflow.inputs.map((input) => ({
          name: input.name,
          display_name: input.display_name,
          variable_type_code: input.variable_type_code,
          default_value: input.default_value,
          is_required: input.is_required,
          wfengine_node_id: input.wfengine_node_id,
          wfengine_field_name: input.wfengine_field_name,
        })),
        outputs: workflow.outputs.map((output) => ({
          name: output.name,
          display_name: output.display_name,
          variable_type_code: output.variable_type_code,
          wfengine_node_id: output.wfengine_node_id,
        })),
        notExposed,
      },
      textOf(imported),
    )
  } finally {
    dbs.close()
    logger.close()
  }
}
