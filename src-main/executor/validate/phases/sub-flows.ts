import type { Flow } from '../../../../src-shared/api'
import type { FlowCatalog } from '../catalog'

export type SubFlowTrouble =
  { kind: 'loop'; flowIds: string[] } | { kind: 'unknown'; flowId: string }

/**
 * Finds, for a sub-flow, the first way it could run forever: through this flow again, or through
 * a loop among its own sub-flows. A flow whose graph the catalog does not hold cannot be told
 * apart from a safe one, which is trouble of its own kind. Depth first with an explicit stack;
 * what was explored safely is remembered across the nodes of one validation.
 */
export function subFlowWalker(flow: Flow, catalog: FlowCatalog) {
  const safe = new Set<string>()
  const childrenOf = (id: string): string[] | null => {
    const sub = catalog.flow(id)
    if (!sub?.nodes || !sub.inputs || !sub.outputs) return null
    return [...new Set(sub.nodes.flatMap((n) => (n.sub_flow_id === null ? [] : [n.sub_flow_id])))]
  }
  return (start: string): SubFlowTrouble | null => {
    const path: string[] = []
    const walk: { id: string; children: string[]; next: number }[] = []
    const enter = (id: string): SubFlowTrouble | null => {
      if (id === flow.id) return { kind: 'loop', flowIds: [...path, id] }
      const onPath = path.indexOf(id)
      if (onPath !== -1) return { kind: 'loop', flowIds: [...path.slice(onPath), id] }
      if (safe.has(id)) return null
      const children = childrenOf(id)
      if (children === null) return { kind: 'unknown', flowId: id }
      path.push(id)
      walk.push({ id, children, next: 0 })
      return null
    }
    const first = enter(start)
    if (first) return first
    while (walk.length > 0) {
      const top = walk[walk.length - 1] as { id: string; children: string[]; next: number }
      const child = top.children[top.next++]
      if (child === undefined) {
        safe.add(top.id)
        walk.pop()
        path.pop()
        continue
      }
      const trouble = enter(child)
      if (trouble) return trouble
    }
    return null
  }
}
