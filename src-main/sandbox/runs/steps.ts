import type { Model } from '../../../src-shared/api'
import { validateInput, type ModelLog } from '../models'
import type { SandboxServices } from '../services'
import type { NodeWork, RunWork } from './types'
import { isStoredFile } from './values'

/** What the nodes of a flow or workflow run share while they execute. */
export interface StepContext {
  services: SandboxServices
  orgId: string
  runId: string
  /** The run's seed; each node draws its own from it (see `nodeSeed`). */
  seed: number
  signal: AbortSignal
  fetchImage: (ref: string) => Promise<Buffer>
  /** The flows being run, outermost first: running one of them again would never end. */
  flowStack: readonly string[]
}

export interface Failure {
  code: string
  stage: string
  message: string
}

/** What one node did. */
export interface StepResult {
  /** Values by output port name, for the nodes it feeds and the outputs it fills. */
  ports: Record<string, unknown>
  /** What its node run shows as output. */
  output: Record<string, unknown> | null
  /** What its node run shows as input, when not just the values that reached it. */
  input?: Record<string, unknown>
  cost_micro: number
  workMs: number
  logs: ModelLog[]
  failure: Failure | null
}

/** What a whole graph (a flow, a sub-flow, a workflow) did. */
export interface GraphOutcome {
  /** By the flow's (or workflow's) output names; null where nothing filled an output. */
  output: Record<string, unknown>
  nodes: NodeWork[]
  /** Run-level lines: nodes skipped, the outcome. */
  logs: ModelLog[]
  cost_micro: number
  workMs: number
  failure: Failure | null
}

export const failedStep = (failure: Failure, workMs = 0, logs: ModelLog[] = []): StepResult => ({
  ports: {},
  output: null,
  cost_micro: 0,
  workMs,
  logs: [...logs, { level_code: 'error', message: failure.message }],
  failure,
})

export const stoppedFailure = (): Failure => ({
  code: 'CANCELED',
  stage: 'inference',
  message: 'The run was stopped before all of its nodes ran.',
})

/**
 * A graph's outcome before its first node: every output empty, and, when the input did not fit
 * the graph's inputs (`checkPorts`' problems), the failure that ends it at preprocess.
 */
export function startOutcome(
  outputs: readonly { name: string }[],
  problems: readonly string[],
): GraphOutcome {
  return {
    output: Object.fromEntries(outputs.map((output) => [output.name, null])),
    nodes: [],
    logs: [],
    cost_micro: 0,
    workMs: 0,
    failure:
      problems.length > 0
        ? { code: 'INPUT_VALIDATION_FAILED', stage: 'preprocess', message: problems.join(' ') }
        : null,
  }
}

/**
 * Adds what one node did to its graph's outcome: its work, time and cost. Which node it was, what
 * fed it and its log lines are the caller's; the rest comes from its step.
 */
export function addNodeWork(
  outcome: GraphOutcome,
  step: StepResult,
  node: Pick<NodeWork, 'flow_node_id' | 'wfengine_node_id' | 'input' | 'logs'>,
): void {
  outcome.nodes.push({
    flow_node_id: node.flow_node_id,
    wfengine_node_id: node.wfengine_node_id,
    input: node.input,
    status_code: step.failure ? 'failed' : 'succeeded',
    output: step.output,
    cost_micro: step.cost_micro,
    failure_code: step.failure?.code ?? null,
    failure_stage: step.failure?.stage ?? null,
    failure_message: step.failure?.message ?? null,
    logs: node.logs,
    workMs: step.workMs,
  })
  outcome.workMs += step.workMs
  outcome.cost_micro += step.cost_micro
}

/** A graph's outcome as the run engine takes it. */
export function workOf(outcome: GraphOutcome): RunWork {
  const common = { workMs: outcome.workMs, logs: outcome.logs, nodes: outcome.nodes }
  if (outcome.failure) {
    return {
      ...common,
      ok: false,
      failure_code: outcome.failure.code,
      failure_stage: outcome.failure.stage,
      failure_message: outcome.failure.message,
    }
  }
  return { ...common, ok: true, output: outcome.output, cost_micro: outcome.cost_micro }
}

/** A port as flows, workflows and built-ins declare them: what the input checks need. */
export interface PortSpec {
  name: string
  display_name: string | null
  variable_type_code: string
  validator_code: string | null
  validator_attrs: Record<string, unknown> | null
  is_required?: boolean
  default_value?: unknown
  /** `use_default` fills a missing value with default_value. */
  behavior_code?: string | null
  sort_order?: number
}

/**
 * Checks values against ports with the very checks model inputs get (types, validators, required
 * inputs, defaults), so a flow, a workflow and a built-in node reject what a model would. Files
 * made by other nodes count as image or video references. `open` keeps values of other names
 * unchecked (a prompt template's placeholders).
 */
export function checkPorts(
  what: string,
  ports: readonly PortSpec[],
  values: Record<string, unknown>,
  open = false,
): { input: Record<string, unknown>; problems: string[] } {
  const names = new Set(ports.map((port) => port.name))
  const checked: Record<string, unknown> = {}
  const others: Record<string, unknown> = {}
  for (const [name, value] of Object.entries(values)) {
    if (open && !names.has(name)) others[name] = value
    else checked[name] = isStoredFile(value) ? `blob:${value.sha256}` : value
  }
  const model = {
    slug: what,
    inputs: ports.map((port, index) => ({
      name: port.name,
      display_name: port.display_name,
      variable_type_code: port.variable_type_code,
      validator_code: port.validator_code,
      validator_attrs: port.validator_attrs,
      is_required: port.is_required ?? false,
      default_value: port.default_value ?? null,
      default_behavior_code:
        port.behavior_code ??
        (port.default_value === null || port.default_value === undefined ? 'omit' : 'use_default'),
      sort_order: port.sort_order ?? index,
    })),
  }
  // validateInput reads only the slug and the inputs of the model it is given.
  const validation = validateInput(model as unknown as Model, checked)
  const input: Record<string, unknown> = {}
  for (const [name, value] of Object.entries(validation.input)) {
    const given = values[name]
    input[name] = isStoredFile(given) ? given : value
  }
  return {
    input: { ...input, ...others },
    problems: validation.problems.map((problem) => problem.message),
  }
}
