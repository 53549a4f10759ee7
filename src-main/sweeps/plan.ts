import type { FlowDocument } from '../executor'
import { nodeByRef } from '../flows/node-ref'
import { SweepError, type Axis } from './axes'

/** An axis with what it sets, found in the flow. */
export type PlacedAxis =
  | { key: string; kind: 'flow_input'; name: string }
  | { key: string; kind: 'node_input'; nodeId: string; name: string }

export interface SweepPlan {
  axes: PlacedAxis[]
  /** Nodes whose inputs change from cell to cell (one Batches request each), in flow order. */
  varying: string[]
  /** Nodes every cell shares: they run once, and every cell takes their outputs. */
  shared: string[]
}

function place(flow: FlowDocument, axis: Axis): PlacedAxis {
  const { target } = axis
  if (target.kind === 'flow_input') {
    if (flow.inputs.some((input) => input.name === target.name)) {
      return { key: axis.key, kind: 'flow_input', name: target.name }
    }
    const names = flow.inputs.map((input) => input.name).join(', ') || 'none'
    throw new SweepError(
      'AXIS_UNKNOWN_INPUT',
      `--axis ${axis.key}: the flow has no input ${JSON.stringify(target.name)} (its inputs: ${names}); for a node's input, write node.input, e.g. "Upscale.scale".`,
    )
  }
  const match = nodeByRef(flow, target.node)
  if (match.kind === 'ambiguous') {
    throw new SweepError(
      'AXIS_AMBIGUOUS_NODE',
      `--axis ${axis.key}: ${String(match.nodes.length)} nodes are labelled ${JSON.stringify(target.node)}; name the node by its id (${match.nodes.map((node) => node.id).join(', ')}).`,
    )
  }
  if (match.kind === 'missing') {
    throw new SweepError(
      'AXIS_UNKNOWN_NODE',
      `--axis ${axis.key}: no node of the flow is called ${JSON.stringify(target.node)} (its nodes: ${match.labels.map((label) => JSON.stringify(label)).join(', ')}).`,
    )
  }
  const { node } = match
  if (!node.inputs.some((input) => input.name === target.name)) {
    throw new SweepError(
      'AXIS_UNKNOWN_INPUT',
      `--axis ${axis.key}: the node ${JSON.stringify(node.label)} has no input ${JSON.stringify(target.name)} (its inputs: ${node.inputs.map((input) => input.name).join(', ') || 'none'}).`,
    )
  }
  return { key: axis.key, kind: 'node_input', nodeId: node.id, name: target.name }
}

/**
 * Which nodes a sweep varies and which every cell shares. A node varies when an axis sets one
 * of its inputs, when a varying flow input feeds it (`config.flow_inputs`), or when a varying
 * node feeds it; every other node gives the same outputs in every cell, so it runs once. That
 * is what makes a 10×10 sweep of a 3-node flow one request per varying node, not 100 flow runs.
 */
export function planSweep(flow: FlowDocument, axes: readonly Axis[]): SweepPlan {
  const placed = axes.map((axis) => place(flow, axis))
  const sweptInputs = new Set(placed.flatMap((a) => (a.kind === 'flow_input' ? [a.name] : [])))
  const varying = new Set(placed.flatMap((a) => (a.kind === 'node_input' ? [a.nodeId] : [])))
  for (const node of flow.nodes) {
    const fed = Object.values((node.config as { flow_inputs?: unknown }).flow_inputs ?? {})
    if (fed.some((name) => typeof name === 'string' && sweptInputs.has(name))) varying.add(node.id)
  }
  const ownerOf = new Map<string, string>()
  for (const node of flow.nodes) {
    for (const output of node.outputs) ownerOf.set(output.id, node.id)
  }
  // Downstream of a varying node varies too; the flow is a DAG, so this settles.
  for (let grew = true; grew;) {
    grew = false
    for (const node of flow.nodes) {
      if (varying.has(node.id)) continue
      const fedByVarying = node.inputs.some((input) => {
        const source = input.source_output_id ? ownerOf.get(input.source_output_id) : undefined
        return source !== undefined && varying.has(source)
      })
      if (fedByVarying) {
        varying.add(node.id)
        grew = true
      }
    }
  }
  return {
    axes: placed,
    varying: flow.nodes.filter((node) => varying.has(node.id)).map((node) => node.id),
    shared: flow.nodes.filter((node) => !varying.has(node.id)).map((node) => node.id),
  }
}
