import type { XYPosition } from '@xyflow/react'
import type { PaletteItem, PalettePort } from '../../../../src-shared/domain/flow-editor'
import { NODE_TARGET_FIELD, typeConnection } from '../../../../src-shared/domain/flow'
import { canvasNode, DEFAULT_NODE_WIDTH, outputIndex } from './convert'
import { forgetGroupMembers } from './groups'
import type {
  CanvasNode,
  EditorDoc,
  FileFlowInput,
  FileFlowOutput,
  FileNode,
  FileNodeInput,
  FileNodeOutput,
} from './types'

/**
 * Edits of the editor's document, each a pure function from one document to the next: the store
 * records every result as one undo step, and a test can run them without a window.
 */

/** Makes the ids of new records: uuids, as the flow format wants. */
export type NewId = () => string

export const randomId: NewId = () => crypto.randomUUID()

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value)

function mapNode(doc: EditorDoc, nodeId: string, change: (record: FileNode) => FileNode) {
  return {
    ...doc,
    nodes: doc.nodes.map((node) =>
      node.id === nodeId ? { ...node, data: { record: change(node.data.record) } } : node,
    ),
  }
}

function mapInput(
  doc: EditorDoc,
  nodeId: string,
  inputId: string,
  change: (input: FileNodeInput, record: FileNode) => FileNodeInput,
  recordChange: (record: FileNode) => FileNode = (record) => record,
): EditorDoc {
  return mapNode(doc, nodeId, (record) => {
    const changed = recordChange(record)
    return {
      ...changed,
      inputs: (changed.inputs ?? []).map((input) =>
        input.id === inputId ? change(input, changed) : input,
      ),
    }
  })
}

/** The node's `config.flow_inputs` / `config.flow_outputs` mapping, port name → flow port name. */
export function portMapping(
  record: FileNode,
  key: 'flow_inputs' | 'flow_outputs',
): Record<string, string> {
  const value = record.config?.[key]
  if (!isRecord(value)) return {}
  return Object.fromEntries(
    Object.entries(value).filter(
      (entry): entry is [string, string] => typeof entry[1] === 'string',
    ),
  )
}

/** The record with one port's mapping set (a name) or removed (null). */
function withMapping(
  record: FileNode,
  key: 'flow_inputs' | 'flow_outputs',
  portName: string,
  flowName: string | null,
): FileNode {
  const current = record.config?.[key]
  if (flowName === null && !(isRecord(current) && Object.hasOwn(current, portName))) return record
  const { [portName]: _dropped, ...rest } = isRecord(current) ? current : {}
  const next = flowName === null ? rest : { ...rest, [portName]: flowName }
  const { [key]: _old, ...config } = record.config ?? {}
  return {
    ...record,
    config: Object.keys(next).length > 0 ? { ...config, [key]: next } : config,
  }
}

// ---- Positions

export function moveNodes(doc: EditorDoc, positions: ReadonlyMap<string, XYPosition>): EditorDoc {
  return {
    ...doc,
    nodes: doc.nodes.map((node) => {
      const position = positions.get(node.id)
      return position && (position.x !== node.position.x || position.y !== node.position.y)
        ? { ...node, position: { x: position.x, y: position.y } }
        : node
    }),
  }
}

// ---- Connections

/** An edge being drawn (React Flow's Connection, or an Edge): node ids and port ids. */
export interface PortConnection {
  source: string
  target: string
  sourceHandle?: string | null
  targetHandle?: string | null
}

export type ConnectionVerdict = { ok: true; fanOut: boolean } | { ok: false; reason: string }

/**
 * Whether an edge may be drawn, by `typeConnection` on the two ports' variable types: `none` is
 * refused, and a list fanned out into single values only feeds a model node.
 */
export function judgeConnection(
  nodes: readonly CanvasNode[],
  connection: PortConnection,
): ConnectionVerdict {
  if (connection.source === connection.target) {
    return { ok: false, reason: 'A node cannot feed itself.' }
  }
  const output = connection.sourceHandle
    ? outputIndex(nodes).get(connection.sourceHandle)
    : undefined
  const target = nodes.find((node) => node.id === connection.target)
  const input = target?.data.record.inputs?.find((item) => item.id === connection.targetHandle)
  if (!output || output.nodeId !== connection.source || !target || !input) {
    return { ok: false, reason: 'Connect an output to an input.' }
  }
  const from = output.variableType
  const to = input.variable_type_code
  switch (typeConnection(from, to)) {
    case 'direct':
      return { ok: true, fanOut: false }
    case 'fan_out':
      return target.data.record.type_code === 'model'
        ? { ok: true, fanOut: true }
        : { ok: false, reason: `A list of ${from} only fans out into a model node.` }
    case 'none':
      return { ok: false, reason: `A ${from} output cannot feed a ${to} input.` }
  }
}

/**
 * Connects an output to an input. An input is fed from one place only, so the edge replaces the
 * input's value, its flow-input mapping and any earlier edge.
 */
export function connect(doc: EditorDoc, connection: PortConnection): EditorDoc {
  const verdict = judgeConnection(doc.nodes, connection)
  const outputId = connection.sourceHandle
  const inputId = connection.targetHandle
  if (!verdict.ok || !outputId || !inputId) return doc
  const target = doc.nodes.find((node) => node.id === connection.target)
  const input = target?.data.record.inputs?.find((item) => item.id === inputId)
  if (!input) return doc
  return mapInput(
    doc,
    connection.target,
    inputId,
    (item) => ({ ...item, source_output_id: outputId, value: null }),
    (record) => withMapping(record, 'flow_inputs', input.name, null),
  )
}

/** Removes the edges into these inputs (by input id). */
export function disconnectInputs(doc: EditorDoc, inputIds: ReadonlySet<string>): EditorDoc {
  if (inputIds.size === 0) return doc
  return {
    ...doc,
    nodes: doc.nodes.map((node) => {
      const inputs = node.data.record.inputs
      if (!inputs?.some((input) => inputIds.has(input.id) && input.source_output_id)) return node
      return {
        ...node,
        data: {
          record: {
            ...node.data.record,
            inputs: inputs.map((input) =>
              inputIds.has(input.id) ? { ...input, source_output_id: null } : input,
            ),
          },
        },
      }
    }),
  }
}

/** Removes the retry edges into these inputs (by input id): the inputs keep their own feed. */
export function disconnectRetries(doc: EditorDoc, inputIds: ReadonlySet<string>): EditorDoc {
  if (inputIds.size === 0) return doc
  return {
    ...doc,
    nodes: doc.nodes.map((node) => {
      const inputs = node.data.record.inputs
      if (!inputs?.some((input) => inputIds.has(input.id) && input.retry_source_output_id)) {
        return node
      }
      return {
        ...node,
        data: {
          record: {
            ...node.data.record,
            inputs: inputs.map((input) =>
              inputIds.has(input.id) ? { ...input, retry_source_output_id: null } : input,
            ),
          },
        },
      }
    }),
  }
}

// ---- Nodes

/** `base`, or `base 2`, `base 3`…: labels name nodes on the canvas and in tests. */
export function uniqueLabel(nodes: readonly CanvasNode[], base: string): string {
  const taken = new Set(nodes.map((node) => node.data.record.label))
  if (!taken.has(base)) return base
  for (let n = 2; ; n++) {
    const label = `${base} ${n}`
    if (!taken.has(label)) return label
  }
}

function inputFromPort(port: PalettePort, index: number, newId: NewId): FileNodeInput {
  return {
    id: newId(),
    name: port.name,
    display_name: port.displayName,
    variable_type_code: port.variableType,
    validator_code: port.validatorCode,
    validator_attrs: port.validatorAttrs,
    is_required: port.required,
    default_value: port.defaultValue ?? null,
    sort_order: index,
    value: null,
    source_output_id: null,
  }
}

function outputFromPort(port: PalettePort, index: number, newId: NewId): FileNodeOutput {
  return {
    id: newId(),
    name: port.name,
    display_name: port.displayName,
    variable_type_code: port.variableType,
    validator_code: port.validatorCode,
    validator_attrs: port.validatorAttrs,
    sort_order: index,
  }
}

/** A new node for a palette entry, with the entry's ports, at a canvas position. */
export function nodeFromPalette(
  nodes: readonly CanvasNode[],
  item: PaletteItem,
  position: XYPosition,
  newId: NewId = randomId,
): CanvasNode {
  const record: FileNode = {
    id: newId(),
    slug: null,
    label: uniqueLabel(nodes, item.name),
    subtitle: null,
    type_code: item.kind,
    x: Math.round(position.x),
    y: Math.round(position.y),
    width: DEFAULT_NODE_WIDTH,
    config: {},
    collapsed: false,
    model_id: null,
    builtin_node_code: null,
    wfengine_workflow_id: null,
    sub_flow_id: null,
    [NODE_TARGET_FIELD[item.kind]]: item.target,
    inputs: item.inputs.map((port, i) => inputFromPort(port, i, newId)),
    outputs: item.outputs.map((port, i) => outputFromPort(port, i, newId)),
  }
  return canvasNode(record)
}

export function addNodes(doc: EditorDoc, nodes: readonly CanvasNode[]): EditorDoc {
  return { ...doc, nodes: [...doc.nodes, ...nodes] }
}

/**
 * Removes nodes, and with them the edges they fed: the inputs they fed are left unconnected
 * rather than pointing at an output that is gone.
 */
export function removeNodes(doc: EditorDoc, nodeIds: ReadonlySet<string>): EditorDoc {
  if (!doc.nodes.some((node) => nodeIds.has(node.id))) return doc
  return removeFromCanvas(forgetGroupMembers(doc, nodeIds), nodeIds)
}

function removeFromCanvas(doc: EditorDoc, nodeIds: ReadonlySet<string>): EditorDoc {
  const gone = new Set(
    doc.nodes
      .filter((node) => nodeIds.has(node.id))
      .flatMap((node) => (node.data.record.outputs ?? []).map((output) => output.id)),
  )
  const unfed = (id: string | null | undefined) => (id && gone.has(id) ? null : id)
  return {
    ...doc,
    nodes: doc.nodes
      .filter((node) => !nodeIds.has(node.id))
      .map((node) => {
        const inputs = node.data.record.inputs
        const touched = inputs?.some(
          (input) =>
            unfed(input.source_output_id) !== input.source_output_id ||
            unfed(input.retry_source_output_id) !== input.retry_source_output_id,
        )
        if (!inputs || !touched) return node
        return {
          ...node,
          data: {
            record: {
              ...node.data.record,
              inputs: inputs.map((input) => ({
                ...input,
                ...('source_output_id' in input
                  ? { source_output_id: unfed(input.source_output_id) }
                  : {}),
                ...('retry_source_output_id' in input
                  ? { retry_source_output_id: unfed(input.retry_source_output_id) }
                  : {}),
              })),
            },
          },
        }
      }),
  }
}

export function setNodeLabel(doc: EditorDoc, nodeId: string, label: string): EditorDoc {
  return mapNode(doc, nodeId, (record) => ({ ...record, label }))
}

// ---- What feeds an input

/** Where an input takes its value from: the three are exclusive (AMBIGUOUS_INPUT otherwise). */
export type InputFeed =
  | { kind: 'edge'; outputId: string }
  | { kind: 'flowInput'; name: string }
  | { kind: 'value'; value: unknown }
  | { kind: 'none' }

export function feedOf(record: FileNode, input: FileNodeInput): InputFeed {
  if (input.source_output_id) return { kind: 'edge', outputId: input.source_output_id }
  const mapped = portMapping(record, 'flow_inputs')[input.name]
  if (mapped !== undefined) return { kind: 'flowInput', name: mapped }
  if (input.value !== null && input.value !== undefined)
    return { kind: 'value', value: input.value }
  return { kind: 'none' }
}

/** Gives an input a literal value (null clears it), dropping its flow-input mapping. */
export function setInputValue(
  doc: EditorDoc,
  nodeId: string,
  inputId: string,
  value: unknown,
): EditorDoc {
  const node = doc.nodes.find((candidate) => candidate.id === nodeId)
  const input = node?.data.record.inputs?.find((candidate) => candidate.id === inputId)
  if (!input) return doc
  return mapInput(
    doc,
    nodeId,
    inputId,
    (item) => ({ ...item, value, ...(value !== null ? { source_output_id: null } : {}) }),
    (record) => (value !== null ? withMapping(record, 'flow_inputs', input.name, null) : record),
  )
}

/** Feeds an input from a flow input (null removes the mapping), dropping its value and edge. */
export function mapInputToFlowInput(
  doc: EditorDoc,
  nodeId: string,
  inputId: string,
  flowInputName: string | null,
): EditorDoc {
  const node = doc.nodes.find((candidate) => candidate.id === nodeId)
  const input = node?.data.record.inputs?.find((candidate) => candidate.id === inputId)
  if (!input) return doc
  return mapInput(
    doc,
    nodeId,
    inputId,
    (item) => (flowInputName === null ? item : { ...item, value: null, source_output_id: null }),
    (record) => withMapping(record, 'flow_inputs', input.name, flowInputName),
  )
}

/** Makes a node's output fill a flow output (null stops it). */
export function mapOutputToFlowOutput(
  doc: EditorDoc,
  nodeId: string,
  outputName: string,
  flowOutputName: string | null,
): EditorDoc {
  let next = doc
  if (flowOutputName !== null) {
    // A flow output takes one node output: whatever filled it before lets go.
    for (const node of doc.nodes) {
      for (const [port, name] of Object.entries(portMapping(node.data.record, 'flow_outputs'))) {
        if (name === flowOutputName && !(node.id === nodeId && port === outputName)) {
          next = mapNode(next, node.id, (record) => withMapping(record, 'flow_outputs', port, null))
        }
      }
    }
  }
  return mapNode(next, nodeId, (record) =>
    withMapping(record, 'flow_outputs', outputName, flowOutputName),
  )
}

// ---- The flow's inputs and outputs

/** `base`, or `base_2`…: port names are unique within a flow. */
export function uniquePortName(taken: Iterable<string>, base: string): string {
  const names = new Set(taken)
  if (!names.has(base)) return base
  for (let n = 2; ; n++) {
    if (!names.has(`${base}_${n}`)) return `${base}_${n}`
  }
}

export function addFlowInput(
  doc: EditorDoc,
  variableType: string,
  newId: NewId = randomId,
): EditorDoc {
  const inputs = doc.flow.inputs ?? []
  const input: FileFlowInput = {
    id: newId(),
    name: uniquePortName(
      inputs.map((item) => item.name),
      variableType.replace(/\W+/g, '_'),
    ),
    display_name: null,
    description: null,
    variable_type_code: variableType,
    validator_code: null,
    validator_attrs: null,
    is_required: false,
    default_value: null,
    sort_order: inputs.length,
  }
  return { ...doc, flow: { ...doc.flow, inputs: [...inputs, input] } }
}

export function addFlowOutput(
  doc: EditorDoc,
  variableType: string,
  newId: NewId = randomId,
): EditorDoc {
  const outputs = doc.flow.outputs ?? []
  const output: FileFlowOutput = {
    id: newId(),
    name: uniquePortName(
      outputs.map((item) => item.name),
      variableType.replace(/\W+/g, '_'),
    ),
    display_name: null,
    description: null,
    variable_type_code: variableType,
    validator_code: null,
    validator_attrs: null,
    sort_order: outputs.length,
  }
  return { ...doc, flow: { ...doc.flow, outputs: [...outputs, output] } }
}

/** Renames every mapping that names a flow port, so nodes keep following it. */
function renameMappings(
  doc: EditorDoc,
  key: 'flow_inputs' | 'flow_outputs',
  from: string,
  to: string | null,
): EditorDoc {
  let next = doc
  for (const node of doc.nodes) {
    for (const [port, name] of Object.entries(portMapping(node.data.record, key))) {
      if (name === from) {
        next = mapNode(next, node.id, (record) => withMapping(record, key, port, to))
      }
    }
  }
  return next
}

export type FlowInputPatch = Partial<
  Pick<
    FileFlowInput,
    'name' | 'display_name' | 'variable_type_code' | 'is_required' | 'default_value'
  >
>

export function updateFlowInput(doc: EditorDoc, id: string, patch: FlowInputPatch): EditorDoc {
  const inputs = doc.flow.inputs ?? []
  const current = inputs.find((input) => input.id === id)
  if (!current) return doc
  const next = {
    ...doc,
    flow: {
      ...doc.flow,
      inputs: inputs.map((input) => (input.id === id ? { ...input, ...patch } : input)),
    },
  }
  return patch.name !== undefined && patch.name !== current.name
    ? renameMappings(next, 'flow_inputs', current.name, patch.name)
    : next
}

export function removeFlowInput(doc: EditorDoc, id: string): EditorDoc {
  const inputs = doc.flow.inputs ?? []
  const current = inputs.find((input) => input.id === id)
  if (!current) return doc
  const next = {
    ...doc,
    flow: { ...doc.flow, inputs: inputs.filter((input) => input !== current) },
  }
  return renameMappings(next, 'flow_inputs', current.name, null)
}

export type FlowOutputPatch = Partial<Pick<FileFlowOutput, 'name' | 'display_name'>>

export function updateFlowOutput(doc: EditorDoc, id: string, patch: FlowOutputPatch): EditorDoc {
  const outputs = doc.flow.outputs ?? []
  const current = outputs.find((output) => output.id === id)
  if (!current) return doc
  const next = {
    ...doc,
    flow: {
      ...doc.flow,
      outputs: outputs.map((output) => (output.id === id ? { ...output, ...patch } : output)),
    },
  }
  return patch.name !== undefined && patch.name !== current.name
    ? renameMappings(next, 'flow_outputs', current.name, patch.name)
    : next
}

export function removeFlowOutput(doc: EditorDoc, id: string): EditorDoc {
  const outputs = doc.flow.outputs ?? []
  const current = outputs.find((output) => output.id === id)
  if (!current) return doc
  const next = {
    ...doc,
    flow: { ...doc.flow, outputs: outputs.filter((output) => output !== current) },
  }
  return renameMappings(next, 'flow_outputs', current.name, null)
}

/** The flow file's own name, kept in step with a rename from the list. */
export function setFlowName(doc: EditorDoc, name: string): EditorDoc {
  return doc.flow.name === name ? doc : { ...doc, flow: { ...doc.flow, name } }
}
