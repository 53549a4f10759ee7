import type { FlowNode } from '../../../src-shared/api'
import type { FlowProblem } from '../../../src-shared/domain/flow'
import type { FlowDocument } from '../types'
import { analyzeFlow, type InputBinding } from './analyze'
import type { FlowCatalog } from './catalog'
import { reachable, reversed } from './graph'

/** One node as the scheduler sees it. */
export interface PlannedNode {
  node: FlowNode
  /** Position in the flow's `nodes`. */
  index: number
  /** The nodes that feed this one directly (edges; retry edges left out), in flow order. */
  upstream: readonly string[]
  /** The nodes this one feeds directly, in flow order. */
  downstream: readonly string[]
  /** How each input gets its value, by input name; ports left off the node with a default too. */
  inputs: ReadonlyMap<string, InputBinding>
  /**
   * Inputs that receive a list at a single-value port: the node runs once per item, as one
   * Batches API request. With several, item i of each list goes to run i (lists zipped).
   */
  fanOut: readonly string[]
  /** By output id: the type the output carries, `T[]` when the node fans out. */
  outputTypes: ReadonlyMap<string, string>
}

/** A quality gate's way back: when the gate fails, `nodeId` runs again fed by its output. */
export interface RetryPlan {
  gateNodeId: string
  gateOutputId: string
  gateOutputName: string
  /** The node the retry feeds, and which of its inputs. */
  nodeId: string
  inputName: string
  /** Runs of the loop in all, the first included (the gate's `config.max_attempts`). */
  maxAttempts: number
  /** What runs again on a retry: the node, the gate and everything between, in plan order. */
  loop: readonly string[]
}

export interface FlowOutputPlan {
  name: string
  nodeId: string
  outputId: string
  outputName: string
}

export interface CriticalPath {
  /** The sum of the durations along the path, in the unit of the estimate. */
  length: number
  nodeIds: string[]
}

export interface FlowPlan {
  flowId: string
  /** Node ids, each after every node that feeds it; ties kept in the flow's order. */
  order: readonly string[]
  nodes: ReadonlyMap<string, PlannedNode>
  fanOuts: readonly { nodeId: string; inputName: string }[]
  retries: readonly RetryPlan[]
  flowOutputs: readonly FlowOutputPlan[]
  /** The given nodes and every node they feed, directly or not: what re-runs after an edit. */
  downstreamOf: (nodeIds: Iterable<string>) => Set<string>
  /** The given nodes and every node that feeds them, directly or not. */
  upstreamOf: (nodeIds: Iterable<string>) => Set<string>
  /** The longest chain of dependent nodes, each weighing its estimated duration. */
  criticalPath: (durationOf: (node: FlowNode) => number) => CriticalPath
  /**
   * By node id: the longest chain from the node (its own duration included) to the end of the
   * flow, each node weighing its estimated duration. The nodes with the most left behind them
   * are the ones to start first when slots are short.
   */
  tailLengths: (durationOf: (node: FlowNode) => number) => Map<string, number>
}

export type PlanResult = { ok: true; plan: FlowPlan } | { ok: false; problems: FlowProblem[] }

/**
 * Plans a flow that validates; a flow with problems gets them back instead (the same list as
 * `validateFlow`), as nothing of it may be dispatched.
 */
export function planFlow(flow: FlowDocument, catalog: FlowCatalog): PlanResult {
  const analysis = analyzeFlow(flow, catalog)
  if (analysis.problems.length > 0) return { ok: false, problems: analysis.problems }
  const { next, order } = analysis
  const previous = reversed(next)
  const ids = flow.nodes.map((node) => node.id)
  const indexOf = new Map(ids.map((id, index) => [id, index]))
  const idsOf = (indexes: Iterable<number>) => [...indexes].map((index) => ids[index] as string)
  const indexesOf = (nodeIds: Iterable<string>) => {
    const indexes: number[] = []
    for (const id of nodeIds) {
      const index = indexOf.get(id)
      if (index === undefined) throw new Error(`The flow has no node ${id}.`)
      indexes.push(index)
    }
    return indexes
  }
  const rank = new Map(order.map((index, position) => [index, position]))
  const inPlanOrder = (indexes: Iterable<number>) =>
    [...indexes].sort((a, b) => (rank.get(a) ?? 0) - (rank.get(b) ?? 0))

  const nodes = new Map<string, PlannedNode>()
  flow.nodes.forEach((node, index) => {
    const outputTypes = new Map(
      node.outputs.map((output) => [
        output.id,
        analysis.outputTypes.get(output.id) ?? output.variable_type_code,
      ]),
    )
    nodes.set(node.id, {
      node,
      index,
      upstream: idsOf([...(previous[index] ?? [])].sort((a, b) => a - b)),
      downstream: idsOf([...(next[index] ?? [])].sort((a, b) => a - b)),
      inputs: analysis.bindings[index] ?? new Map(),
      fanOut: analysis.fanOut[index] ?? [],
      outputTypes,
    })
  })

  const retries = analysis.retries.map((retry): RetryPlan => {
    const after = reachable([retry.node], next)
    const before = reachable([retry.gate], previous)
    return {
      gateNodeId: ids[retry.gate] as string,
      gateOutputId: retry.output.id,
      gateOutputName: retry.output.name,
      nodeId: ids[retry.node] as string,
      inputName: retry.inputName,
      maxAttempts: retry.maxAttempts,
      loop: idsOf(inPlanOrder([...after].filter((index) => before.has(index)))),
    }
  })

  return {
    ok: true,
    plan: {
      flowId: flow.id,
      order: idsOf(order),
      nodes,
      fanOuts: flow.nodes.flatMap((node, index) =>
        (analysis.fanOut[index] ?? []).map((inputName) => ({ nodeId: node.id, inputName })),
      ),
      retries,
      flowOutputs: analysis.flowOutputs.map((link) => ({
        name: link.name,
        nodeId: ids[link.node] as string,
        outputId: link.output.id,
        outputName: link.output.name,
      })),
      downstreamOf: (nodeIds) => new Set(idsOf(inPlanOrder(reachable(indexesOf(nodeIds), next)))),
      upstreamOf: (nodeIds) => new Set(idsOf(inPlanOrder(reachable(indexesOf(nodeIds), previous)))),
      criticalPath: (durationOf) => {
        const finish = new Array<number>(ids.length).fill(0)
        const via = new Array<number>(ids.length).fill(-1)
        let end = -1
        for (const index of order) {
          let start = 0
          for (const from of previous[index] ?? []) {
            if (via[index] === -1 || (finish[from] as number) > start) {
              start = finish[from] as number
              via[index] = from
            }
          }
          finish[index] = start + checkedDuration(flow.nodes[index] as FlowNode, durationOf)
          if (end === -1 || finish[index] > (finish[end] as number)) end = index
        }
        const path: number[] = []
        for (let at = end; at !== -1; at = via[at] as number) path.push(at)
        return { length: end === -1 ? 0 : (finish[end] as number), nodeIds: idsOf(path.reverse()) }
      },
      tailLengths: (durationOf) => {
        const tail = new Array<number>(ids.length).fill(0)
        for (let at = order.length - 1; at >= 0; at--) {
          const index = order[at] as number
          let after = 0
          for (const to of next[index] ?? []) after = Math.max(after, tail[to] as number)
          tail[index] = after + checkedDuration(flow.nodes[index] as FlowNode, durationOf)
        }
        return new Map(ids.map((id, index) => [id, tail[index] as number]))
      },
    },
  }
}

function checkedDuration(node: FlowNode, durationOf: (node: FlowNode) => number): number {
  const duration = durationOf(node)
  if (!Number.isFinite(duration) || duration < 0) {
    throw new RangeError(
      `The duration estimate of node ${node.id} is ${duration}; it must be a finite number of 0 or more.`,
    )
  }
  return duration
}
