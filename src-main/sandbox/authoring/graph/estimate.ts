import type { NodeTarget, StoredNode } from './types'

/**
 * Phase 8: what a run of the flow is expected to cost, the sum of its nodes' estimates. Only
 * literal values are known before a run, so connected inputs count as left out.
 */
export function estimateRun(
  nodes: readonly StoredNode[],
  targets: readonly (NodeTarget | undefined)[],
): number {
  let estimatedMicro = 0
  nodes.forEach((node, index) => {
    const estimate = targets[index]?.estimate
    if (!estimate) return
    const values: Record<string, unknown> = {}
    for (const input of node.inputs) {
      if (input.source_output_id === null && input.value !== null) values[input.name] = input.value
    }
    estimatedMicro += estimate(values)
  })
  return estimatedMicro
}
