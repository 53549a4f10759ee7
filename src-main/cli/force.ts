import type { FlowDocument } from '../executor'
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
    const byId = flow.nodes.find((node) => node.id === ref || node.slug === ref)
    if (byId) return byId.id
    const labelled = flow.nodes.filter((node) => node.label === ref)
    const [only] = labelled
    if (only && labelled.length === 1) return only.id
    if (labelled.length > 1) {
      throw new CliError(
        `--force ${JSON.stringify(ref)} names ${labelled.length} nodes of this flow (${labelled.map((node) => node.id).join(', ')}); give the id of the one to run again.`,
        EXIT.usage,
        'NODE_AMBIGUOUS',
      )
    }
    const known = flow.nodes.map((node) => JSON.stringify(node.label)).join(', ')
    throw new CliError(
      `--force ${JSON.stringify(ref)} is no node of this flow; give a node's label, id or slug (its nodes: ${known}).`,
      EXIT.usage,
      'NODE_NOT_FOUND',
    )
  })
}
