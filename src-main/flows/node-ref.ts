import type { FlowDocument } from '../executor'

type FlowNode = FlowDocument['nodes'][number]

/** What a node's name in a command (its id, slug or label) points at in a flow. */
export type NodeRefMatch =
  | { kind: 'found'; node: FlowNode }
  | { kind: 'ambiguous'; nodes: FlowNode[] }
  | { kind: 'missing'; labels: string[] }

/**
 * A node named as a person names it: its id or slug, or its label (what the editor shows),
 * which must then be one node's only. Used by `--force` and by a sweep's node axes, which say
 * what went wrong in their own words.
 */
export function nodeByRef(flow: Pick<FlowDocument, 'nodes'>, ref: string): NodeRefMatch {
  const byId = flow.nodes.find((node) => node.id === ref || node.slug === ref)
  if (byId) return { kind: 'found', node: byId }
  const labelled = flow.nodes.filter((node) => node.label === ref)
  const [only] = labelled
  if (only && labelled.length === 1) return { kind: 'found', node: only }
  if (labelled.length > 1) return { kind: 'ambiguous', nodes: labelled }
  return { kind: 'missing', labels: flow.nodes.map((node) => node.label) }
}
