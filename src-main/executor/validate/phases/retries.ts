import type { FlowNode } from '../../../../src-shared/api'
import { typeConnection } from '../../../../src-shared/domain/flow'
import { reachable } from '../graph'
import { DEFAULT_MAX_ATTEMPTS, isAttempts } from './attempts'
import { nodeName, sourceOf, typeOfOutput, type AnalysisContext } from './context'

/**
 * Retry edges: from a quality gate back to a node that feeds it. Read after types, as the gate's
 * output may carry a list by then, and after loops, as "feeds it" means nothing on a loop. Sets
 * `retries`, each with the attempts its gate allows, for the plan's retry loops.
 */
export function checkRetries(context: AnalysisContext): void {
  const { nodes, next, report } = context
  nodes.forEach((node, i) => {
    node.inputs.forEach((input, j) => {
      const source = sourceOf(context, input.retry_source_output_id)
      if (!source) return
      const path = `nodes.${i}.inputs.${j}.retry_source_output_id`
      const place = { nodeId: node.id, inputName: input.name }
      const gate = nodes[source.node] as FlowNode
      const from = typeOfOutput(context, source.output)
      if (typeConnection(from, input.variable_type_code) !== 'direct') {
        report(
          'TYPE_MISMATCH',
          path,
          `The retry edge from output ${JSON.stringify(source.output.name)} of ${nodeName(gate)} brings ${from} to the ${input.variable_type_code} input ${JSON.stringify(input.name)} of ${nodeName(node)}; connect an output of a matching type.`,
          place,
        )
      }
      if (!context.looped && !reachable([i], next).has(source.node)) {
        report(
          'RETRY_NOT_BACKWARD',
          path,
          `The retry edge comes from ${nodeName(gate)}, which does not depend on ${nodeName(node)}: running ${nodeName(node)} again could not change its verdict. Take the retry from a gate downstream of the node.`,
          place,
        )
      }
      const attempts = gate.config.max_attempts
      context.retries.push({
        gate: source.node,
        output: source.output,
        node: i,
        inputName: input.name,
        maxAttempts: isAttempts(attempts) ? attempts : DEFAULT_MAX_ATTEMPTS,
      })
    })
  })
}
