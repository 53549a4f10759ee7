import type { FlowProblem } from '../../../../src-shared/domain/flow'
import type { EditorDoc } from './types'

/**
 * The problems of a check placed where the editor shows them: on a node, on one of its inputs,
 * on a flow input or output, or on the flow as a whole.
 */
export interface ProblemIndex {
  byNode: ReadonlyMap<string, FlowProblem[]>
  /** Keyed by `inputKey(nodeId, inputName)`. */
  byInput: ReadonlyMap<string, FlowProblem[]>
  /** By flow input id, then flow output id. */
  byFlowInput: ReadonlyMap<string, FlowProblem[]>
  byFlowOutput: ReadonlyMap<string, FlowProblem[]>
  /** Problems that name no node nor flow port. */
  flow: FlowProblem[]
  count: number
}

export const inputKey = (nodeId: string, inputName: string) => `${nodeId}\u0000${inputName}`

export const EMPTY_PROBLEMS: ProblemIndex = {
  byNode: new Map(),
  byInput: new Map(),
  byFlowInput: new Map(),
  byFlowOutput: new Map(),
  flow: [],
  count: 0,
}

function push(map: Map<string, FlowProblem[]>, key: string, problem: FlowProblem) {
  const list = map.get(key)
  if (list) {
    if (!list.includes(problem)) list.push(problem)
  } else map.set(key, [problem])
}

/**
 * Places each problem by the ids it names; a problem that names none is placed by its path into
 * the document (`nodes.2…`, `inputs.0…`, `outputs.1…`), which follows the file's order.
 */
export function indexProblems(problems: readonly FlowProblem[], doc: EditorDoc): ProblemIndex {
  const byNode = new Map<string, FlowProblem[]>()
  const byInput = new Map<string, FlowProblem[]>()
  const byFlowInput = new Map<string, FlowProblem[]>()
  const byFlowOutput = new Map<string, FlowProblem[]>()
  const flow: FlowProblem[] = []
  const nodeOfOutput = new Map<string, string>()
  for (const node of doc.nodes) {
    for (const output of node.data.record.outputs ?? []) nodeOfOutput.set(output.id, node.id)
  }
  for (const problem of problems) {
    const [root, index] = problem.path.split('.')
    const at = index !== undefined && /^\d+$/.test(index) ? Number(index) : -1
    const nodes = new Set<string>(problem.nodeIds ?? [])
    const nodeId =
      problem.nodeId ??
      (problem.outputId ? nodeOfOutput.get(problem.outputId) : undefined) ??
      (root === 'nodes' ? doc.nodes[at]?.id : undefined)
    if (nodeId !== undefined) nodes.add(nodeId)
    for (const id of nodes) push(byNode, id, problem)
    if (nodeId !== undefined && problem.inputName !== undefined) {
      push(byInput, inputKey(nodeId, problem.inputName), problem)
    }
    let placed = nodes.size > 0
    if (!placed && root === 'inputs') {
      const input = doc.flow.inputs?.[at]
      if (input) {
        push(byFlowInput, input.id, problem)
        placed = true
      }
    }
    if (!placed && root === 'outputs') {
      const output = doc.flow.outputs?.[at]
      if (output) {
        push(byFlowOutput, output.id, problem)
        placed = true
      }
    }
    if (!placed) flow.push(problem)
  }
  return { byNode, byInput, byFlowInput, byFlowOutput, flow, count: problems.length }
}
