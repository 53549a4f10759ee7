/**
 * Nodes in an order where each comes after the nodes it waits on (`isReady` says whether all of
 * those are placed), and otherwise in the order given. Authoring refuses loops; should one slip
 * through, the nodes on it keep the given order rather than never running. Flows and workflows
 * both run in this order, each with its own idea of what feeds a node.
 */
export function feedersFirst<N extends { id: string }>(
  nodes: readonly N[],
  isReady: (node: N, placed: ReadonlySet<string>) => boolean,
): N[] {
  const order: N[] = []
  const placed = new Set<string>()
  while (order.length < nodes.length) {
    const ready =
      nodes.find((node) => !placed.has(node.id) && isReady(node, placed)) ??
      nodes.find((node) => !placed.has(node.id))
    if (!ready) break
    placed.add(ready.id)
    order.push(ready)
  }
  return order
}
