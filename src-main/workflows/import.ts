import type { Workflow, WorkflowCreate } from '../../src-shared/api'
import { plural } from '../../src-shared/domain/plural'
import type { MirrorChange } from '../../src-shared/ipc'
import type { Mirror } from '../db'
import { isServiceError, type ServiceClient } from '../service'
import { WorkflowImportError } from './comfyui/errors'
import { exposeComfyWorkflow, type NotExposedNode } from './comfyui/expose'
import { parseComfyFile } from './comfyui/file'

/**
 * What an import needs, and no more, so that the CLI (its own client and databases) and the
 * app's core (its client, mirror and event bus) both call it the same way.
 */
export interface WorkflowImportContext {
  client: ServiceClient
  mirror: Mirror
  orgId: string
  /** Told once the workflow is in the mirror: the app's open views read the workflows again. */
  changed?: (collections: MirrorChange[]) => void
  signal?: AbortSignal
}

export interface WorkflowImportRequest {
  bytes: Uint8Array
  fileName: string
  /** The workflow's name; the file's name in words when left out. */
  name?: string | undefined
}

export interface ImportedWorkflow {
  workflow: Workflow
  /** Custom nodes kept in the workflow as they are, with nothing of them offered as an input. */
  notExposed: NotExposedNode[]
}

/** "sdxl_txt2img-v2.json" → "Sdxl txt2img v2": a name a person would give it. */
export function nameFromFileName(fileName: string): string {
  const base = fileName.replace(/^.*[\\/]/, '').replace(/\.[^.]+$/, '')
  const words = base.replace(/[_\-.\s]+/g, ' ').trim()
  if (words === '') return 'Imported workflow'
  return words.charAt(0).toUpperCase() + words.slice(1)
}

/** One line for people: "6 inputs, 1 output; 1 custom node not exposed". */
export function importSummary({ workflow, notExposed }: ImportedWorkflow): string {
  const ports = `${plural(workflow.inputs.length, 'input')}, ${plural(workflow.outputs.length, 'output')}`
  return notExposed.length === 0
    ? ports
    : `${ports}; ${plural(notExposed.length, 'custom node')} not exposed`
}

/**
 * A ComfyUI file made a workflow of the organization: parsed, its inputs and outputs chosen,
 * created on the service (POST /v1/comfyui-workflows, inputs and outputs nested), then written
 * into the mirror at once, so the palette offers it without waiting for a sync.
 */
export async function importWorkflowFile(
  context: WorkflowImportContext,
  request: WorkflowImportRequest,
): Promise<ImportedWorkflow> {
  const { workflow: graph, editor } = parseComfyFile(request.bytes, request.fileName)
  const exposed = exposeComfyWorkflow(graph)
  const fileName = request.fileName.replace(/^.*[\\/]/, '')
  const body: WorkflowCreate = {
    name: request.name?.trim() || nameFromFileName(fileName),
    description: `Imported from the ComfyUI file ${fileName}.`,
    workflow_json: graph,
    inputs: exposed.inputs,
    outputs: exposed.outputs,
    ...(editor ? { graph: editor } : {}),
    ...(exposed.notExposed.length > 0
      ? {
          custom_nodes: {
            nodes: exposed.notExposed.map((node) => ({
              node_id: node.nodeId,
              class_type: node.classType,
            })),
          },
        }
      : {}),
  }
  let workflow: Workflow
  try {
    workflow = await context.client.post('/v1/comfyui-workflows', {
      body,
      headers: { 'X-Organization-Id': context.orgId },
      ...(context.signal ? { signal: context.signal } : {}),
    })
  } catch (error) {
    if (!isServiceError(error)) throw error
    if (error.status === 0) {
      throw new WorkflowImportError(
        'OFFLINE',
        'The service cannot be reached, so the workflow was not imported; try again once online.',
        { cause: error },
      )
    }
    throw new WorkflowImportError(
      'WORKFLOW_NOT_CREATED',
      `The service did not take the workflow: ${error.message}`,
      { cause: error },
    )
  }
  context.mirror.workflows.upsertPage([workflow], { orgId: context.orgId })
  context.changed?.(['workflows'])
  return { workflow, notExposed: exposed.notExposed }
}
