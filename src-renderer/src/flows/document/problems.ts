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

/** One reason a run was refused, placed on the node (and input) it is about when it names one. */
export interface RefusalIssue {
  message: string
  nodeId: string | null
  nodeLabel: string | null
  /** The input as the node shows it (display name, else name). */
  inputLabel: string | null
}

/**
 * Places the problems a refused run came back with (`FLOW_INVALID`'s issues: a path into the
 * flow file the run was given, and a message). The check found the same problems with the
 * same words and knew their nodes: an issue whose message a check problem has takes its place.
 * Otherwise its path is read (`nodes.2.inputs.0…`), but only when the run was given the whole
 * flow: "run to here" cuts the flow down, and its paths count the nodes that were kept.
 */
export function placeRefusal(
  issues: readonly { path: string; message: string }[],
  doc: EditorDoc,
  checked: readonly FlowProblem[],
  wholeFlow: boolean,
): RefusalIssue[] {
  const byId = new Map(doc.nodes.map((node) => [node.id, node]))
  return issues.map((issue) => {
    const known = checked.find((problem) => problem.message === issue.message)
    let node = known?.nodeId !== undefined ? byId.get(known.nodeId) : undefined
    let inputName = known?.inputName
    if (!known && wholeFlow) {
      const [root, index, field, inputIndex] = issue.path.split('.')
      if (root === 'nodes' && index !== undefined && /^\d+$/.test(index)) {
        node = doc.nodes[Number(index)]
        if (field === 'inputs' && inputIndex !== undefined && /^\d+$/.test(inputIndex)) {
          inputName = node?.data.record.inputs?.[Number(inputIndex)]?.name
        }
      }
    }
    const input = node?.data.record.inputs?.find((candidate) => candidate.name === inputName)
    return {
      message: issue.message,
      nodeId: node?.id ?? null,
      nodeLabel: node ? node.data.record.label || 'Untitled node' : null,
      inputLabel: input ? (input.display_name ?? input.name) : null,
    }
  })
}
