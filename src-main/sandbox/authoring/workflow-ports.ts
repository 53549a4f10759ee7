import type {
  WorkflowInput,
  WorkflowInputCreate,
  WorkflowOutput,
  WorkflowOutputCreate,
} from '../../../src-shared/api'
import type { FieldProblem } from '../errors'
import { isCatalogCode } from '../models'
import { stampRecord, type StoredRecord } from './graph'
import { portRecord, type PortItem } from './port-record'

export interface PortsContext {
  workflowId: string
  now: string
  newId: () => string
  /** The workflow's inputs and outputs before, by `input:<id>` / `output:<id>`. */
  existing: ReadonlyMap<string, StoredRecord>
  workflowJson: Record<string, unknown>
}

export interface BuiltPorts {
  inputs: WorkflowInput[]
  outputs: WorkflowOutput[]
  problems: FieldProblem[]
}

/**
 * The node ids of a workflow-engine graph, when its shape tells them: the API form keys each
 * node by id (`{"3": {"class_type": …}}`), the editor form lists them (`{"nodes": [{"id": 3}]}`).
 * Undefined for any other shape, whose node ids are then not checked.
 */
export function workflowNodeIds(json: Record<string, unknown>): Set<string> | undefined {
  const isObject = (value: unknown): value is Record<string, unknown> =>
    typeof value === 'object' && value !== null && !Array.isArray(value)
  const nodes = json.nodes
  if (Array.isArray(nodes)) {
    if (!nodes.every((node) => isObject(node) && node.id !== undefined)) return undefined
    return new Set(nodes.map((node) => String((node as { id: unknown }).id)))
  }
  const entries = Object.values(json)
  if (entries.length > 0 && entries.every((node) => isObject(node) && 'class_type' in node)) {
    return new Set(Object.keys(json))
  }
  return undefined
}

/** The records of a workflow's inputs and outputs, and everything wrong with them. */
export function buildWorkflowPorts(
  body: { inputs: readonly WorkflowInputCreate[]; outputs: readonly WorkflowOutputCreate[] },
  context: PortsContext,
): BuiltPorts {
  const problems: FieldProblem[] = []
  const problem = (field: string, code: string, message: string) => {
    problems.push({ field, code, message })
  }
  const nodeIds = workflowNodeIds(context.workflowJson)
  const seenIds = new Map<string, string>()

  const check = (
    item: WorkflowInputCreate | WorkflowOutputCreate,
    path: string,
    names: Map<string, number>,
    index: number,
  ): string => {
    const first = names.get(item.name)
    if (first === undefined) names.set(item.name, index)
    else {
      problem(
        `${path}.name`,
        'duplicate',
        `${path}.name ${JSON.stringify(item.name)} is already used at index ${first}; names must be unique, since runs pass values by name.`,
      )
    }
    if (!isCatalogCode('variable-types', item.variable_type_code)) {
      problem(
        `${path}.variable_type_code`,
        'unknown_code',
        `${path}.variable_type_code ${JSON.stringify(item.variable_type_code)} is not a code of /v1/catalogs/variable-types.`,
      )
    }
    if (item.validator_code !== undefined && !isCatalogCode('validators', item.validator_code)) {
      problem(
        `${path}.validator_code`,
        'unknown_code',
        `${path}.validator_code ${JSON.stringify(item.validator_code)} is not a code of /v1/catalogs/validators.`,
      )
    }
    if (nodeIds && item.wfengine_node_id !== undefined && !nodeIds.has(item.wfengine_node_id)) {
      problem(
        `${path}.wfengine_node_id`,
        'not_found',
        `${path}.wfengine_node_id ${JSON.stringify(item.wfengine_node_id)} is not a node of workflow_json (its nodes: ${[...nodeIds].join(', ')}).`,
      )
    }
    if (item.id === undefined) return context.newId()
    const earlier = seenIds.get(item.id)
    if (earlier) {
      problem(
        `${path}.id`,
        'duplicate',
        `${path}.id repeats the id of ${earlier}; every input and output needs its own id.`,
      )
    } else {
      seenIds.set(item.id, path)
    }
    return item.id
  }

  const port = <K extends 'workflow input' | 'workflow output'>(
    kind: K,
    item: PortItem<K>,
    index: number,
    names: Map<string, number>,
  ) => {
    const side = kind === 'workflow input' ? 'input' : 'output'
    const path = `${side}s.${index}`
    const id = check(item, path, names, index)
    // Only inputs have a default behaviour.
    const behavior =
      kind === 'workflow input' ? (item as WorkflowInputCreate).default_behavior_code : undefined
    if (behavior !== undefined && !isCatalogCode('variable-behaviors', behavior)) {
      problem(
        `${path}.default_behavior_code`,
        'unknown_code',
        `${path}.default_behavior_code ${JSON.stringify(behavior)} is not a code of /v1/catalogs/variable-behaviors.`,
      )
    }
    return stampRecord(
      context.existing.get(`${side}:${id}`),
      context.now,
      (created_at, updated_at) =>
        portRecord(kind, { id, ownerId: context.workflowId }, item, { created_at, updated_at }),
    )
  }
  const inputNames = new Map<string, number>()
  const inputs = body.inputs.map((item, index) => port('workflow input', item, index, inputNames))
  const outputNames = new Map<string, number>()
  const outputs = body.outputs.map((item, index) =>
    port('workflow output', item, index, outputNames),
  )
  return { inputs, outputs, problems }
}
