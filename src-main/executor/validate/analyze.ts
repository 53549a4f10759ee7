import type { Flow, FlowNode, FlowNodeInput, FlowNodeOutput } from '../../../src-shared/api'
import {
  isNodeKind,
  listElement,
  listType,
  NODE_TARGET_FIELD,
  NODE_KINDS,
  typeConnection,
  type FlowProblem,
  type FlowProblemCode,
} from '../../../src-shared/domain/flow'
import type { FlowDocument } from '../types'
import type { FlowCatalog } from './catalog'
import { loopThrough, reachable, stronglyConnected, topologicalOrder } from './graph'
import { show, typeProblem, validatorProblem, type ValidatorRule } from './values'

/** Attempts of a quality gate's loop when its node's config does not say (`max_attempts`). */
export const DEFAULT_MAX_ATTEMPTS = 3
/** More attempts than this is taken for a typo: each attempt may cost money. */
export const MAX_ATTEMPTS_LIMIT = 20

/** A port of what a node runs: a model input, a built-in's output, a sub-flow's flow input… */
export interface Port extends ValidatorRule {
  name: string
  variable_type_code: string
  is_required: boolean
  default_value: unknown
  behavior_code: string | null
}

interface Target {
  title: string
  /** Null when the catalog does not know them. */
  inputs: readonly Port[] | null
  outputs: readonly Port[] | null
  otherInputs: boolean
  /** Inputs that take a list of their type whole, not item by item (a built-in's choice). */
  listInputs: ReadonlySet<string>
}

export interface RetrySource {
  /** The quality gate: the node whose output feeds the retry. */
  nodeId: string
  outputId: string
  outputName: string
}

/**
 * Where a node input's value comes from. `fanOut`: a list arrives at a single-value input, and
 * the node runs once per item (a model node: one batch).
 */
export type InputBinding = (
  | { from: 'edge'; nodeId: string; outputId: string; outputName: string }
  | { from: 'flow_input'; name: string }
  | { from: 'value'; value: unknown }
  | { from: 'default'; value: unknown }
  | { from: 'none' }
) & { fanOut: boolean; retry: RetrySource | null }

export interface RetryLink {
  gate: number
  output: FlowNodeOutput
  node: number
  inputName: string
  maxAttempts: number
}

/** What validation learnt about a flow, which planning builds on. */
export interface Analysis {
  problems: FlowProblem[]
  /** By node index: the nodes each feeds through edges (retry edges left out), no repeats. */
  next: number[][]
  /** Node indexes, each after every node that feeds it; empty when the edges make a loop. */
  order: number[]
  bindings: Map<string, InputBinding>[]
  /** By node index: the inputs that fan out. */
  fanOut: string[][]
  /** By output id: the type each output carries, `T[]` when its node fans out. */
  outputTypes: Map<string, string>
  retries: RetryLink[]
  flowOutputs: { name: string; node: number; output: FlowNodeOutput }[]
}

type Place = Pick<FlowProblem, 'nodeId' | 'inputName' | 'outputId' | 'nodeIds' | 'flowIds'>

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value)

const given = (value: unknown) => value !== null && value !== undefined

const nodeName = (node: FlowNode) =>
  `node ${JSON.stringify(node.label !== '' ? node.label : (node.slug ?? node.id))}`

/** Catalog lookups asked once per validation: a mirror-backed catalog reads SQLite each time. */
function remembered(catalog: FlowCatalog): FlowCatalog {
  const cache = <T>(lookup: (key: string) => T) => {
    const seen = new Map<string, T>()
    return (key: string): T => {
      if (seen.has(key)) return seen.get(key) as T
      const value = lookup(key)
      seen.set(key, value)
      return value
    }
  }
  return {
    model: cache((id) => catalog.model(id)),
    workflow: cache((id) => catalog.workflow(id)),
    flow: cache((id) => catalog.flow(id)),
    builtin: cache((code) => catalog.builtin(code)),
    variableTypes: () => catalog.variableTypes(),
    validators: () => catalog.validators(),
  }
}

interface PortLike {
  name: string
  variable_type_code: string
  validator_code: string | null
  validator_attrs: { [key: string]: unknown } | null
  is_required?: boolean
  default_value?: unknown
  behavior_code?: string | null
  default_behavior_code?: string | null
}

const toPort = (port: PortLike): Port => ({
  name: port.name,
  variable_type_code: port.variable_type_code,
  validator_code: port.validator_code,
  validator_attrs: port.validator_attrs,
  is_required: port.is_required ?? false,
  default_value: port.default_value ?? null,
  behavior_code: port.behavior_code ?? port.default_behavior_code ?? null,
})

const ports = (list: readonly PortLike[] | undefined) => (list ? list.map(toPort) : null)

/** Whether an input with nothing feeding it is still given a value (a default, or a random one). */
function fillsItself(input: { default_value?: unknown; behavior_code?: string | null }) {
  return given(input.default_value) || input.behavior_code === 'randomize'
}

/** The default an unfed input takes, as the service applies it; undefined when none. */
function defaultOf(input: FlowNodeInput | undefined, port: Port | undefined): unknown {
  const behavior = input?.behavior_code ?? port?.behavior_code ?? null
  if (behavior === 'omit' || behavior === 'randomize') return undefined
  const value = input?.default_value ?? port?.default_value ?? null
  return value === null ? undefined : value
}

export function analyzeFlow(flow: FlowDocument, sourceCatalog: FlowCatalog): Analysis {
  const catalog = remembered(sourceCatalog)
  const problems: FlowProblem[] = []
  const add = (code: FlowProblemCode, path: string, message: string, place: Place = {}) => {
    problems.push({ code, message, path, ...place })
  }
  const nodes = flow.nodes

  // ---- Identity: ids share one space, names are unique among siblings.
  const ids = new Map<string, string>()
  const claim = (id: string, path: string, place: Place) => {
    const earlier = ids.get(id)
    if (earlier === undefined) ids.set(id, path)
    else {
      add(
        'DUPLICATE_ID',
        `${path}.id`,
        `${path} has the id of ${earlier}; every node, input and output of a flow needs its own id (give this one a new uuid).`,
        place,
      )
    }
  }
  const uniqueNames = (
    items: readonly { name: string }[],
    path: string,
    what: string,
    place: (index: number) => Place,
  ) => {
    const seen = new Map<string, number>()
    items.forEach((item, index) => {
      const first = seen.get(item.name)
      if (first === undefined) seen.set(item.name, index)
      else {
        add(
          'DUPLICATE_NAME',
          `${path}.${index}.name`,
          `${path}.${index} is named ${JSON.stringify(item.name)} like ${path}.${first}; ${what} names must be unique, rename one.`,
          place(index),
        )
      }
    })
  }
  flow.inputs.forEach((input, k) => {
    claim(input.id, `inputs.${k}`, {})
  })
  flow.outputs.forEach((output, k) => {
    claim(output.id, `outputs.${k}`, {})
  })
  const slugs = new Map<string, number>()
  nodes.forEach((node, i) => {
    claim(node.id, `nodes.${i}`, { nodeId: node.id })
    node.inputs.forEach((input, j) => {
      claim(input.id, `nodes.${i}.inputs.${j}`, { nodeId: node.id, inputName: input.name })
    })
    node.outputs.forEach((output, j) => {
      claim(output.id, `nodes.${i}.outputs.${j}`, { nodeId: node.id, outputId: output.id })
    })
    uniqueNames(node.inputs, `nodes.${i}.inputs`, 'node input', (j) => ({
      nodeId: node.id,
      inputName: node.inputs[j]?.name ?? '',
    }))
    uniqueNames(node.outputs, `nodes.${i}.outputs`, 'node output', (j) => ({
      nodeId: node.id,
      outputId: node.outputs[j]?.id ?? '',
    }))
    if (node.slug !== null) {
      const first = slugs.get(node.slug)
      if (first === undefined) slugs.set(node.slug, i)
      else {
        add(
          'DUPLICATE_SLUG',
          `nodes.${i}.slug`,
          `${nodeName(node)} has the slug ${JSON.stringify(node.slug)} of nodes.${first}; node slugs must be unique within a flow.`,
          { nodeId: node.id },
        )
      }
    }
  })
  uniqueNames(flow.inputs, 'inputs', 'flow input', () => ({}))
  uniqueNames(flow.outputs, 'outputs', 'flow output', () => ({}))

  // ---- Catalog codes.
  const typeCodes = new Set(catalog.variableTypes().map((record) => record.code))
  const validatorCodes = new Set(catalog.validators().map((record) => record.code))
  const typeKnown = (code: string): boolean => {
    if (typeCodes.size === 0 || typeCodes.has(code)) return true
    const element = listElement(code)
    return element !== null && typeKnown(element)
  }
  const checkCodes = (record: PortLike, path: string, place: Place) => {
    if (!typeKnown(record.variable_type_code)) {
      add(
        'UNKNOWN_TYPE',
        `${path}.variable_type_code`,
        `${path}.variable_type_code ${JSON.stringify(record.variable_type_code)} is not a variable type of the catalog; use one of ${[...typeCodes].join(', ')} (or a list of one, such as image[]).`,
        place,
      )
    }
    const validator = record.validator_code
    if (validator !== null && validatorCodes.size > 0 && !validatorCodes.has(validator)) {
      add(
        'UNKNOWN_VALIDATOR',
        `${path}.validator_code`,
        `${path}.validator_code ${JSON.stringify(validator)} is not a validator of the catalog; use one of ${[...validatorCodes].join(', ')}, or none.`,
        place,
      )
    }
  }
  flow.inputs.forEach((input, k) => {
    checkCodes(input, `inputs.${k}`, {})
  })
  flow.outputs.forEach((output, k) => {
    checkCodes(output, `outputs.${k}`, {})
  })
  nodes.forEach((node, i) => {
    node.inputs.forEach((input, j) => {
      checkCodes(input, `nodes.${i}.inputs.${j}`, { nodeId: node.id, inputName: input.name })
    })
    node.outputs.forEach((output, j) => {
      checkCodes(output, `nodes.${i}.outputs.${j}`, { nodeId: node.id, outputId: output.id })
    })
  })

  // ---- What each node runs.
  const subFlowTrouble = subFlowWalker(flow, catalog)
  const targets = nodes.map((node, i): Target | null => {
    const path = `nodes.${i}`
    const place = { nodeId: node.id }
    const kind = node.type_code
    if (!isNodeKind(kind)) {
      add(
        'UNKNOWN_NODE_TYPE',
        `${path}.type_code`,
        `${nodeName(node)} has the type ${JSON.stringify(kind)}; a node is one of ${NODE_KINDS.join(', ')}.`,
        place,
      )
      return null
    }
    const wanted = NODE_TARGET_FIELD[kind]
    for (const field of Object.values(NODE_TARGET_FIELD)) {
      if (field !== wanted && node[field] !== null) {
        add(
          'TARGET_CONFLICT',
          `${path}.${field}`,
          `${nodeName(node)} is a ${kind} node, which runs ${wanted}; clear ${field}.`,
          place,
        )
      }
    }
    const reference = node[wanted]
    if (reference === null) {
      add(
        'TARGET_MISSING',
        `${path}.${wanted}`,
        `${nodeName(node)} is a ${kind} node but names nothing to run; set ${wanted}.`,
        place,
      )
      return null
    }
    const field = `${path}.${wanted}`
    const unknownDetails = (what: string) => {
      add(
        'TARGET_DETAILS_UNKNOWN',
        field,
        `${nodeName(node)} runs ${what}, whose inputs and outputs are not known here yet; sync it (atelier sync) and validate again.`,
        place,
      )
    }
    switch (kind) {
      case 'model': {
        const model = catalog.model(reference)
        if (!model) {
          add(
            'UNKNOWN_MODEL',
            field,
            `${nodeName(node)} runs a model (${reference}) the catalog does not have; pick one from the model catalog.`,
            place,
          )
          return null
        }
        const known = model.inputs !== undefined && model.outputs !== undefined
        if (!known) unknownDetails(`the model ${model.slug}`)
        return {
          title: `the model ${model.slug}`,
          inputs: known ? ports(model.inputs) : null,
          outputs: known ? ports(model.outputs) : null,
          otherInputs: false,
          listInputs: new Set(),
        }
      }
      case 'builtin': {
        const builtin = catalog.builtin(reference)
        if (!builtin) {
          add(
            'UNKNOWN_BUILTIN',
            field,
            `${nodeName(node)} runs the built-in ${JSON.stringify(reference)}, which does not exist; pick one of the built-in nodes.`,
            place,
          )
          return null
        }
        return {
          title: `the built-in ${builtin.code}`,
          inputs: ports(builtin.inputs),
          outputs: ports(builtin.outputs),
          otherInputs: builtin.otherInputs,
          listInputs: new Set(builtin.listInputs),
        }
      }
      case 'wfengine_workflow': {
        const workflow = catalog.workflow(reference)
        if (!workflow) {
          add(
            'UNKNOWN_WORKFLOW',
            field,
            `${nodeName(node)} runs a workflow (${reference}) that is not one of this organization's; pick another workflow.`,
            place,
          )
          return null
        }
        return {
          title: `the workflow ${JSON.stringify(workflow.name)}`,
          inputs: ports(workflow.inputs),
          outputs: ports(workflow.outputs),
          otherInputs: false,
          listInputs: new Set(),
        }
      }
      case 'sub_flow': {
        if (reference === flow.id) {
          add(
            'SUB_FLOW_RECURSION',
            field,
            `${nodeName(node)} runs this flow itself as a sub-flow, which would never end; point it at another flow.`,
            { ...place, flowIds: [flow.id] },
          )
          return null
        }
        const sub = catalog.flow(reference)
        if (!sub) {
          add(
            'UNKNOWN_SUB_FLOW',
            field,
            `${nodeName(node)} runs a sub-flow (${reference}) that is not one of this organization's flows; point it at another flow.`,
            place,
          )
          return null
        }
        const trouble = subFlowTrouble(reference)
        if (trouble?.kind === 'loop') {
          const names = trouble.flowIds.map((id) =>
            id === flow.id ? 'this flow' : JSON.stringify(catalog.flow(id)?.name ?? id),
          )
          add(
            'SUB_FLOW_RECURSION',
            field,
            `${nodeName(node)} runs the sub-flow ${JSON.stringify(sub.name)}, which contains itself (${names.join(' → ')}), and would never end; point it at another flow.`,
            { ...place, flowIds: trouble.flowIds },
          )
        } else if (trouble?.kind === 'unknown') {
          unknownDetails(
            trouble.flowId === reference
              ? `the sub-flow ${JSON.stringify(sub.name)}`
              : `the sub-flow ${JSON.stringify(sub.name)}, which runs a flow (${trouble.flowId})`,
          )
        }
        const known = sub.inputs !== undefined && sub.outputs !== undefined
        return {
          title: `the sub-flow ${JSON.stringify(sub.name)}`,
          inputs: known ? ports(sub.inputs) : null,
          outputs: known ? ports(sub.outputs) : null,
          otherInputs: false,
          listInputs: new Set(),
        }
      }
    }
  })

  const portOf = (i: number, name: string) => targets[i]?.inputs?.find((p) => p.name === name)

  // ---- `config.fan_out`: the inputs a model node runs once per item of, said outright.
  const explicitFanOut = nodes.map((node, i): ReadonlySet<string> | null => {
    const names = node.config.fan_out
    if (names === undefined || names === null) return null
    const path = `nodes.${i}.config.fan_out`
    if (!Array.isArray(names) || !names.every((name) => typeof name === 'string')) {
      add(
        'INVALID_CONFIG',
        path,
        `config.fan_out of ${nodeName(node)} must be a list of the node's input names.`,
        { nodeId: node.id },
      )
      return null
    }
    if (node.type_code !== 'model') {
      add(
        'INVALID_CONFIG',
        path,
        `${nodeName(node)} has config.fan_out, but only model nodes run once per item of a list (one batch); remove it.`,
        { nodeId: node.id },
      )
      return null
    }
    names.forEach((name, k) => {
      if (!node.inputs.some((input) => input.name === name)) {
        add(
          'UNKNOWN_PORT',
          `${path}.${k}`,
          `config.fan_out of ${nodeName(node)} names an input ${JSON.stringify(name)} the node does not have; remove it or add the input.`,
          { nodeId: node.id, inputName: name },
        )
      }
    })
    return new Set(names)
  })
  /** Whether a list reaching input `name` of node `i` may fan out. */
  const mayFanOut = (i: number, name: string) =>
    nodes[i]?.type_code === 'model' && (explicitFanOut[i]?.has(name) ?? true)

  // ---- Each node's ports against what it runs.
  const declaredFanOut: string[][] = nodes.map(() => [])
  nodes.forEach((node, i) => {
    const target = targets[i]
    if (!target) return
    node.inputs.forEach((input, j) => {
      const path = `nodes.${i}.inputs.${j}`
      const place = { nodeId: node.id, inputName: input.name }
      if (!target.inputs) return
      const port = target.inputs.find((p) => p.name === input.name)
      if (!port) {
        if (!target.otherInputs) {
          add(
            'UNKNOWN_PORT',
            `${path}.name`,
            `${nodeName(node)} has an input ${JSON.stringify(input.name)}, which ${target.title} does not take; use one of: ${target.inputs.map((p) => p.name).join(', ') || '(none)'}.`,
            place,
          )
        }
        return
      }
      const connection = typeConnection(input.variable_type_code, port.variable_type_code)
      if (connection === 'fan_out' && mayFanOut(i, input.name)) {
        declaredFanOut[i]?.push(input.name)
      } else if (connection !== 'direct' && !target.listInputs.has(input.name)) {
        add(
          'TYPE_MISMATCH',
          `${path}.variable_type_code`,
          `Input ${JSON.stringify(input.name)} of ${nodeName(node)} is ${input.variable_type_code}, but ${target.title} takes ${port.variable_type_code} there; make them match.`,
          place,
        )
      }
    })
    node.outputs.forEach((output, j) => {
      const path = `nodes.${i}.outputs.${j}`
      const place = { nodeId: node.id, outputId: output.id }
      if (!target.outputs) return
      const port = target.outputs.find((p) => p.name === output.name)
      if (!port) {
        add(
          'UNKNOWN_PORT',
          `${path}.name`,
          `${nodeName(node)} has an output ${JSON.stringify(output.name)}, which ${target.title} does not make; use one of: ${target.outputs.map((p) => p.name).join(', ') || '(none)'}.`,
          place,
        )
        return
      }
      if (typeConnection(port.variable_type_code, output.variable_type_code) !== 'direct') {
        add(
          'TYPE_MISMATCH',
          `${path}.variable_type_code`,
          `Output ${JSON.stringify(output.name)} of ${nodeName(node)} is ${output.variable_type_code}, but ${target.title} makes ${port.variable_type_code} there; make them match.`,
          place,
        )
      }
    })
    for (const port of target.inputs ?? []) {
      if (node.inputs.some((input) => input.name === port.name)) continue
      if (port.is_required && !fillsItself(port)) {
        add(
          'MISSING_REQUIRED_INPUT',
          `nodes.${i}.inputs`,
          `${nodeName(node)} needs the input ${JSON.stringify(port.name)} of ${target.title}; add it and connect it, map a flow input to it, or give it a value.`,
          { nodeId: node.id, inputName: port.name },
        )
      }
    }
  })

  // ---- Config: flow input and output mappings, the quality gate's attempts.
  const flowInputs = new Map(flow.inputs.map((input) => [input.name, input]))
  const flowOutputs = new Map(flow.outputs.map((output, k) => [output.name, { output, k }]))
  const mappedInputs = nodes.map(() => new Map<string, string>())
  const mapping = (node: FlowNode, i: number, key: 'flow_inputs' | 'flow_outputs') => {
    const value = node.config[key]
    if (value === undefined) return []
    if (!isRecord(value)) {
      add(
        'INVALID_CONFIG',
        `nodes.${i}.config.${key}`,
        `config.${key} of ${nodeName(node)} must be an object mapping the node's ${key === 'flow_inputs' ? 'input' : 'output'} names to flow ${key === 'flow_inputs' ? 'input' : 'output'} names.`,
        { nodeId: node.id },
      )
      return []
    }
    return Object.entries(value).flatMap(([portName, flowName]): [string, string][] => {
      if (typeof flowName === 'string') return [[portName, flowName]]
      add(
        'INVALID_CONFIG',
        `nodes.${i}.config.${key}.${portName}`,
        `config.${key}.${portName} of ${nodeName(node)} must be the name of a flow ${key === 'flow_inputs' ? 'input' : 'output'}.`,
        { nodeId: node.id },
      )
      return []
    })
  }
  const filledBy = new Map<string, string>()
  const outputLinks: Analysis['flowOutputs'] = []
  nodes.forEach((node, i) => {
    for (const [portName, flowName] of mapping(node, i, 'flow_inputs')) {
      const path = `nodes.${i}.config.flow_inputs.${portName}`
      if (!node.inputs.some((input) => input.name === portName)) {
        add(
          'UNKNOWN_PORT',
          path,
          `config.flow_inputs of ${nodeName(node)} names an input ${JSON.stringify(portName)} the node does not have; add it to the node's inputs first.`,
          { nodeId: node.id, inputName: portName },
        )
      } else if (!flowInputs.has(flowName)) {
        add(
          'UNKNOWN_FLOW_INPUT',
          path,
          `config.flow_inputs of ${nodeName(node)} feeds ${JSON.stringify(portName)} from a flow input ${JSON.stringify(flowName)} the flow does not have; use one of: ${[...flowInputs.keys()].join(', ') || '(none yet)'}.`,
          { nodeId: node.id, inputName: portName },
        )
      } else mappedInputs[i]?.set(portName, flowName)
    }
    for (const [portName, flowName] of mapping(node, i, 'flow_outputs')) {
      const path = `nodes.${i}.config.flow_outputs.${portName}`
      const output = node.outputs.find((o) => o.name === portName)
      const target = flowOutputs.get(flowName)
      if (!output) {
        add(
          'UNKNOWN_PORT',
          path,
          `config.flow_outputs of ${nodeName(node)} names an output ${JSON.stringify(portName)} the node does not have; add it to the node's outputs first.`,
          { nodeId: node.id },
        )
      } else if (!target) {
        add(
          'UNKNOWN_FLOW_OUTPUT',
          path,
          `config.flow_outputs of ${nodeName(node)} fills a flow output ${JSON.stringify(flowName)} the flow does not have; use one of: ${[...flowOutputs.keys()].join(', ') || '(none yet)'}.`,
          { nodeId: node.id, outputId: output.id },
        )
      } else {
        const earlier = filledBy.get(flowName)
        if (earlier !== undefined) {
          add(
            'FLOW_OUTPUT_CONFLICT',
            path,
            `The flow output ${JSON.stringify(flowName)} is already filled by ${earlier}; a flow output takes one node output, so remove one mapping.`,
            { nodeId: node.id, outputId: output.id },
          )
        } else {
          filledBy.set(flowName, `output ${JSON.stringify(portName)} of ${nodeName(node)}`)
          outputLinks.push({ name: flowName, node: i, output })
        }
      }
    }
    const attempts = node.config.max_attempts
    if (
      attempts !== undefined &&
      !(
        Number.isSafeInteger(attempts) &&
        (attempts as number) >= 1 &&
        (attempts as number) <= MAX_ATTEMPTS_LIMIT
      )
    ) {
      add(
        'INVALID_CONFIG',
        `nodes.${i}.config.max_attempts`,
        `config.max_attempts of ${nodeName(node)} must be a whole number from 1 to ${MAX_ATTEMPTS_LIMIT} (how many times its quality gate may run the flow), but it is ${show(attempts)}.`,
        { nodeId: node.id },
      )
    }
  })
  flow.outputs.forEach((output, k) => {
    if (!filledBy.has(output.name)) {
      add(
        'UNMAPPED_FLOW_OUTPUT',
        `outputs.${k}`,
        `No node fills the flow output ${JSON.stringify(output.name)}; map a node output to it (config.flow_outputs) or remove it.`,
      )
    }
  })

  // ---- Wiring: what feeds each input.
  const outputsById = new Map<string, { node: number; output: FlowNodeOutput }>()
  nodes.forEach((node, i) => {
    for (const output of node.outputs) {
      if (!outputsById.has(output.id)) outputsById.set(output.id, { node: i, output })
    }
  })
  const next: number[][] = nodes.map(() => [])
  /** `${from}>${to}`: the first input of `to` fed by `from`, to name the edge closing a loop. */
  const edgeInput = new Map<string, number>()
  nodes.forEach((node, i) => {
    node.inputs.forEach((input, j) => {
      const path = `nodes.${i}.inputs.${j}`
      const place = { nodeId: node.id, inputName: input.name }
      const mapped = node.config.flow_inputs
      const fed = [
        input.source_output_id !== null ? 'an edge' : null,
        isRecord(mapped) && Object.hasOwn(mapped, input.name) ? 'a flow input' : null,
        given(input.value) ? 'a value' : null,
      ].filter((source) => source !== null)
      if (fed.length > 1) {
        add(
          'AMBIGUOUS_INPUT',
          path,
          `Input ${JSON.stringify(input.name)} of ${nodeName(node)} is fed by ${fed.join(' and ')}; feed it from one place only.`,
          place,
        )
      }
      for (const key of ['source_output_id', 'retry_source_output_id'] as const) {
        const sourceId = input[key]
        if (sourceId === null) continue
        const source = outputsById.get(sourceId)
        if (!source) {
          add(
            'DANGLING_CONNECTION',
            `${path}.${key}`,
            `Input ${JSON.stringify(input.name)} of ${nodeName(node)} is connected (${key}) to ${sourceId}, which is no node output of this flow; reconnect it or clear ${key}.`,
            place,
          )
        } else if (key === 'source_output_id') {
          const successors = next[source.node] as number[]
          if (!successors.includes(i)) successors.push(i)
          if (!edgeInput.has(`${source.node}>${i}`)) edgeInput.set(`${source.node}>${i}`, j)
        }
      }
      const port = portOf(i, input.name)
      const required = input.is_required || (port?.is_required ?? false)
      const fallback = {
        default_value: input.default_value ?? port?.default_value ?? null,
        behavior_code: input.behavior_code ?? port?.behavior_code ?? null,
      }
      if (required && fed.length === 0 && !fillsItself(fallback)) {
        add(
          'MISSING_REQUIRED_INPUT',
          path,
          `Input ${JSON.stringify(input.name)} of ${nodeName(node)} is required; connect it, map a flow input to it, or give it a value.`,
          place,
        )
      }
    })
  })

  // ---- Loops among the edges.
  let looped = false
  for (const component of stronglyConnected(next)) {
    const start = Math.min(...component)
    const selfLoop = component.length === 1 && (next[start] ?? []).includes(start)
    if (component.length === 1 && !selfLoop) continue
    looped = true
    const loop = loopThrough(start, new Set(component), next)
    const last = loop[loop.length - 1] as number
    const j = edgeInput.get(`${last}>${start}`) ?? 0
    const startNode = nodes[start] as FlowNode
    const route = [...loop, start].map((n) => nodeName(nodes[n] as FlowNode)).join(' → ')
    add(
      'CYCLE',
      `nodes.${start}.inputs.${j}.source_output_id`,
      `The edges make a loop (${route}); an edge must not lead back to a node it comes from. To send the flow back after a failed quality gate, use retry_source_output_id instead.`,
      {
        nodeId: startNode.id,
        inputName: startNode.inputs[j]?.name ?? '',
        nodeIds: loop.map((n) => (nodes[n] as FlowNode).id),
      },
    )
  }

  // ---- Types along the edges, in data order, and the fan-outs they make.
  const { order, stuck } = topologicalOrder(next)
  const outputTypes = new Map<string, string>()
  const typeOfOutput = (output: FlowNodeOutput) =>
    outputTypes.get(output.id) ?? output.variable_type_code
  const fanOut: string[][] = nodes.map(() => [])
  const checkValue = (
    value: unknown,
    type: string,
    rules: readonly ValidatorRule[],
    path: string,
    what: string,
    place: Place,
  ) => {
    const wanted = typeProblem(type, value)
    if (wanted !== null) {
      add('INVALID_VALUE', path, `${what} must be ${wanted}, but it is ${show(value)}.`, place)
      return
    }
    for (const rule of rules) {
      const problem = validatorProblem(rule, value)
      if (problem !== null) {
        add('VALIDATOR_VIOLATION', path, `${what} ${problem}.`, place)
        return
      }
    }
  }
  const rulesOf = (own: ValidatorRule, port: ValidatorRule | undefined): ValidatorRule[] => {
    const rules = own.validator_code !== null ? [own] : []
    if (
      port &&
      port.validator_code !== null &&
      (port.validator_code !== own.validator_code ||
        JSON.stringify(port.validator_attrs) !== JSON.stringify(own.validator_attrs))
    ) {
      rules.push(port)
    }
    return rules
  }
  for (const i of [...order, ...stuck]) {
    const node = nodes[i] as FlowNode
    const explicit = explicitFanOut[i] ?? null
    const takesLists = targets[i]?.listInputs ?? new Set<string>()
    const fans = new Set(declaredFanOut[i])
    /** Settles what a value of type `from` does at an input: arrive as it is, or fan out. */
    const arrive = (from: string, input: FlowNodeInput, path: string, source: string) => {
      const connection = typeConnection(from, input.variable_type_code)
      if (connection === 'direct') return true
      if (connection === 'fan_out') {
        if (takesLists.has(input.name)) return true
        if (mayFanOut(i, input.name)) {
          fans.add(input.name)
          return true
        }
      }
      const name = JSON.stringify(input.name)
      add(
        'TYPE_MISMATCH',
        path,
        connection === 'none'
          ? `${source} brings ${from} to the ${input.variable_type_code} input ${name} of ${nodeName(node)}; connect an output of a matching type.`
          : node.type_code === 'model'
            ? `${source} brings a list (${from}) to the single ${input.variable_type_code} input ${name} of ${nodeName(node)}, which config.fan_out leaves out; add ${name} to config.fan_out to run the model once per item.`
            : `${source} brings a list (${from}) to the single ${input.variable_type_code} input ${name} of ${nodeName(node)}; only model nodes run once per item of a list (one batch). Make the input a ${listType(input.variable_type_code)}, or feed a model node.`,
        { nodeId: node.id, inputName: input.name },
      )
      return false
    }
    node.inputs.forEach((input, j) => {
      const path = `nodes.${i}.inputs.${j}`
      const place = { nodeId: node.id, inputName: input.name }
      const edge =
        input.source_output_id === null ? undefined : outputsById.get(input.source_output_id)
      if (edge) {
        const from = nodes[edge.node] as FlowNode
        arrive(
          typeOfOutput(edge.output),
          input,
          `${path}.source_output_id`,
          `The edge from output ${JSON.stringify(edge.output.name)} of ${nodeName(from)}`,
        )
      }
      const flowInputName = mappedInputs[i]?.get(input.name)
      const flowInput = flowInputName === undefined ? undefined : flowInputs.get(flowInputName)
      if (flowInput) {
        arrive(
          flowInput.variable_type_code,
          input,
          `nodes.${i}.config.flow_inputs.${input.name}`,
          `The flow input ${JSON.stringify(flowInput.name)}`,
        )
      }
      const port = portOf(i, input.name)
      const rules = rulesOf(input, port)
      const what = `Input ${JSON.stringify(input.name)} of ${nodeName(node)}`
      const type = input.variable_type_code
      if (given(input.value)) {
        if (Array.isArray(input.value) && listElement(type) === null) {
          // A list typed into a single-value input: the items are checked one by one.
          if (
            arrive(
              listType(type),
              input,
              `${path}.value`,
              `The list value of ${what.toLowerCase()}`,
            )
          ) {
            checkValue(input.value, listType(type), rules, `${path}.value`, what, place)
          }
        } else checkValue(input.value, type, rules, `${path}.value`, what, place)
      }
      if (given(input.default_value)) {
        checkValue(
          input.default_value,
          type,
          rules,
          `${path}.default_value`,
          `The default of ${what.toLowerCase()}`,
          place,
        )
      }
    })
    for (const name of explicit ?? []) {
      if (fans.has(name) || !node.inputs.some((input) => input.name === name)) continue
      add(
        'INVALID_CONFIG',
        `nodes.${i}.config.fan_out`,
        `config.fan_out of ${nodeName(node)} names ${JSON.stringify(name)}, which receives no list of single values; connect a list to it or remove it from fan_out.`,
        { nodeId: node.id, inputName: name },
      )
    }
    fanOut[i] = node.inputs.map((input) => input.name).filter((name) => fans.has(name))
    for (const output of node.outputs) {
      outputTypes.set(
        output.id,
        fans.size > 0 ? listType(output.variable_type_code) : output.variable_type_code,
      )
    }
  }
  flow.inputs.forEach((input, k) => {
    if (given(input.default_value)) {
      checkValue(
        input.default_value,
        input.variable_type_code,
        rulesOf(input, undefined),
        `inputs.${k}.default_value`,
        `The default of flow input ${JSON.stringify(input.name)}`,
        {},
      )
    }
  })
  for (const link of outputLinks) {
    const node = nodes[link.node] as FlowNode
    const target = flowOutputs.get(link.name)
    const from = typeOfOutput(link.output)
    if (target && typeConnection(from, target.output.variable_type_code) !== 'direct') {
      add(
        'TYPE_MISMATCH',
        `nodes.${link.node}.config.flow_outputs.${link.output.name}`,
        `Output ${JSON.stringify(link.output.name)} of ${nodeName(node)} brings ${from} to the ${target.output.variable_type_code} flow output ${JSON.stringify(link.name)}; make them match${listElement(from) !== null ? ` (the node runs once per item, so the flow output must be a ${from})` : ''}.`,
        { nodeId: node.id, outputId: link.output.id },
      )
    }
  }

  // ---- Retry edges: from a quality gate back to a node that feeds it.
  const retries: RetryLink[] = []
  nodes.forEach((node, i) => {
    node.inputs.forEach((input, j) => {
      const source =
        input.retry_source_output_id === null
          ? undefined
          : outputsById.get(input.retry_source_output_id)
      if (!source) return
      const path = `nodes.${i}.inputs.${j}.retry_source_output_id`
      const place = { nodeId: node.id, inputName: input.name }
      const gate = nodes[source.node] as FlowNode
      const from = typeOfOutput(source.output)
      if (typeConnection(from, input.variable_type_code) !== 'direct') {
        add(
          'TYPE_MISMATCH',
          path,
          `The retry edge from output ${JSON.stringify(source.output.name)} of ${nodeName(gate)} brings ${from} to the ${input.variable_type_code} input ${JSON.stringify(input.name)} of ${nodeName(node)}; connect an output of a matching type.`,
          place,
        )
      }
      if (!looped && !reachable([i], next).has(source.node)) {
        add(
          'RETRY_NOT_BACKWARD',
          path,
          `The retry edge comes from ${nodeName(gate)}, which does not depend on ${nodeName(node)}: running ${nodeName(node)} again could not change its verdict. Take the retry from a gate downstream of the node.`,
          place,
        )
      }
      const attempts = gate.config.max_attempts
      retries.push({
        gate: source.node,
        output: source.output,
        node: i,
        inputName: input.name,
        maxAttempts:
          Number.isSafeInteger(attempts) &&
          (attempts as number) >= 1 &&
          (attempts as number) <= MAX_ATTEMPTS_LIMIT
            ? (attempts as number)
            : DEFAULT_MAX_ATTEMPTS,
      })
    })
  })

  // ---- Bindings, for the runners.
  const bindings = nodes.map((node, i) => {
    const byName = new Map<string, InputBinding>()
    node.inputs.forEach((input) => {
      const fan = fanOut[i]?.includes(input.name) ?? false
      const retrySource =
        input.retry_source_output_id === null
          ? undefined
          : outputsById.get(input.retry_source_output_id)
      const retry = retrySource
        ? {
            nodeId: (nodes[retrySource.node] as FlowNode).id,
            outputId: retrySource.output.id,
            outputName: retrySource.output.name,
          }
        : null
      const edge =
        input.source_output_id === null ? undefined : outputsById.get(input.source_output_id)
      const flowInput = mappedInputs[i]?.get(input.name)
      const fallback = defaultOf(input, portOf(i, input.name))
      const common = { fanOut: fan, retry }
      if (edge) {
        byName.set(input.name, {
          from: 'edge',
          nodeId: (nodes[edge.node] as FlowNode).id,
          outputId: edge.output.id,
          outputName: edge.output.name,
          ...common,
        })
      } else if (flowInput !== undefined) {
        byName.set(input.name, { from: 'flow_input', name: flowInput, ...common })
      } else if (given(input.value)) {
        byName.set(input.name, { from: 'value', value: input.value, ...common })
      } else if (fallback !== undefined) {
        byName.set(input.name, { from: 'default', value: fallback, ...common })
      } else byName.set(input.name, { from: 'none', ...common })
    })
    for (const port of targets[i]?.inputs ?? []) {
      if (byName.has(port.name)) continue
      const fallback = defaultOf(undefined, port)
      if (fallback !== undefined) {
        byName.set(port.name, { from: 'default', value: fallback, fanOut: false, retry: null })
      }
    }
    return byName
  })

  return {
    problems,
    next,
    order: looped ? [] : order,
    bindings,
    fanOut,
    outputTypes,
    retries,
    flowOutputs: outputLinks,
  }
}

type SubFlowTrouble = { kind: 'loop'; flowIds: string[] } | { kind: 'unknown'; flowId: string }

/**
 * Finds, for a sub-flow, the first way it could run forever: through this flow again, or through
 * a loop among its own sub-flows. A flow whose graph the catalog does not hold cannot be told
 * apart from a safe one, which is trouble of its own kind. Depth first with an explicit stack;
 * what was explored safely is remembered across the nodes of one validation.
 */
function subFlowWalker(flow: Flow, catalog: FlowCatalog) {
  const safe = new Set<string>()
  const childrenOf = (id: string): string[] | null => {
    const sub = catalog.flow(id)
    if (!sub?.nodes || !sub.inputs || !sub.outputs) return null
    return [...new Set(sub.nodes.flatMap((n) => (n.sub_flow_id === null ? [] : [n.sub_flow_id])))]
  }
  return (start: string): SubFlowTrouble | null => {
    const path: string[] = []
    const walk: { id: string; children: string[]; next: number }[] = []
    const enter = (id: string): SubFlowTrouble | null => {
      if (id === flow.id) return { kind: 'loop', flowIds: [...path, id] }
      const onPath = path.indexOf(id)
      if (onPath !== -1) return { kind: 'loop', flowIds: [...path.slice(onPath), id] }
      if (safe.has(id)) return null
      const children = childrenOf(id)
      if (children === null) return { kind: 'unknown', flowId: id }
      path.push(id)
      walk.push({ id, children, next: 0 })
      return null
    }
    const first = enter(start)
    if (first) return first
    while (walk.length > 0) {
      const top = walk[walk.length - 1] as { id: string; children: string[]; next: number }
      const child = top.children[top.next++]
      if (child === undefined) {
        safe.add(top.id)
        walk.pop()
        path.pop()
        continue
      }
      const trouble = enter(child)
      if (trouble) return trouble
    }
    return null
  }
}
