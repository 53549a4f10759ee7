import type { FlowDocument } from '../executor'
import { nodeByRef } from '../flows/node-ref'
import { CliError } from './errors'
import { EXIT } from './exit-codes'

/**
 * The nodes `--force` names, as ids: a node's id, its slug, or its label (what the editor
 * shows), which must then be one node's only. A label several nodes share is refused with their
 * ids, so that the person can pick one.
 */
export function forcedNodeIds(
  flow: Pick<FlowDocument, 'nodes'>,
  refs: readonly string[],
): string[] {
  return refs.map((ref) => {
    const match = nodeByRef(flow, ref)
    if (match.kind === 'found') return match.node.id
    if (match.kind === 'ambiguous') {
      throw new CliError(
        `--force ${JSON.stringify(ref)} names ${match.nodes.length} nodes of this flow (${match.nodes.map((node) => node.id).join(', ')}); give the id of the one to run again.`,
        EXIT.usage,
        'NODE_AMBIGUOUS',
      )
    }
    const known = match.labels.map((label) => JSON.stringify(label)).join(', ')
    throw new CliError(
      `--force ${JSON.stringify(ref)} is no node of this flow; give a node's label, id or slug (its nodes: ${known}).`,
      EXIT.usage,
      'NODE_NOT_FOUND',
    )
  })
}
