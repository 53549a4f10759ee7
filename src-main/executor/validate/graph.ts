/**
 * Graph algorithms over nodes numbered 0…n-1, `next[i]` listing the nodes that node i feeds.
 * Every walk keeps an explicit stack: a flow that is one long chain must not overflow the call
 * stack.
 */

export type Successors = readonly (readonly number[])[]

/** Strongly connected components (Tarjan), each in discovery order. */
export function stronglyConnected(next: Successors): number[][] {
  const count = next.length
  const index = new Array<number>(count).fill(-1)
  const low = new Array<number>(count).fill(0)
  const onStack = new Array<boolean>(count).fill(false)
  const stack: number[] = []
  const components: number[][] = []
  let counter = 0
  for (let root = 0; root < count; root++) {
    if (index[root] !== -1) continue
    const walk: { node: number; edge: number }[] = [{ node: root, edge: 0 }]
    index[root] = low[root] = counter++
    stack.push(root)
    onStack[root] = true
    while (walk.length > 0) {
      const top = walk[walk.length - 1] as { node: number; edge: number }
      const edges = next[top.node] ?? []
      if (top.edge < edges.length) {
        const to = edges[top.edge++] as number
        if (index[to] === -1) {
          index[to] = low[to] = counter++
          stack.push(to)
          onStack[to] = true
          walk.push({ node: to, edge: 0 })
        } else if (onStack[to]) {
          low[top.node] = Math.min(low[top.node] as number, index[to] as number)
        }
        continue
      }
      walk.pop()
      const parent = walk[walk.length - 1]
      if (parent) low[parent.node] = Math.min(low[parent.node] as number, low[top.node] as number)
      if (low[top.node] === index[top.node]) {
        const component: number[] = []
        for (let member = -1; member !== top.node;) {
          member = stack.pop() as number
          onStack[member] = false
          component.push(member)
        }
        components.push(component.reverse())
      }
    }
  }
  return components
}

/**
 * One loop through `start` within `members` (a strongly connected component), found breadth
 * first so it is a shortest one: `[start, …, last]`, where `last` feeds `start` again.
 */
export function loopThrough(start: number, members: ReadonlySet<number>, next: Successors) {
  const parent = new Map<number, number>()
  const queue = [start]
  for (let head = 0; head < queue.length; head++) {
    const node = queue[head] as number
    for (const to of next[node] ?? []) {
      if (!members.has(to)) continue
      if (to === start) {
        const loop = [node]
        for (let at = parent.get(node); at !== undefined; at = parent.get(at)) loop.push(at)
        return loop.reverse()
      }
      if (!parent.has(to) && to !== start) {
        parent.set(to, node)
        queue.push(to)
      }
    }
  }
  return [start]
}

/**
 * The nodes in an order where each comes after every node that feeds it, ties broken by number
 * (the flow's own order), so the order is stable for a given document. Nodes on a loop, and those
 * after it, cannot be placed: they come back in `stuck`.
 */
export function topologicalOrder(next: Successors): { order: number[]; stuck: number[] } {
  const count = next.length
  const waiting = new Array<number>(count).fill(0)
  for (const edges of next) for (const to of edges) waiting[to] = (waiting[to] as number) + 1
  const ready = new MinHeap()
  for (let node = 0; node < count; node++) if (waiting[node] === 0) ready.push(node)
  const order: number[] = []
  for (let node = ready.pop(); node !== undefined; node = ready.pop()) {
    order.push(node)
    for (const to of next[node] ?? []) {
      waiting[to] = (waiting[to] as number) - 1
      if (waiting[to] === 0) ready.push(to)
    }
  }
  const placed = new Set(order)
  const stuck: number[] = []
  for (let node = 0; node < count; node++) if (!placed.has(node)) stuck.push(node)
  return { order, stuck }
}

/** Every node reachable from `from` along `next`, `from` included. */
export function reachable(from: Iterable<number>, next: Successors): Set<number> {
  const seen = new Set<number>()
  const pending: number[] = []
  for (const node of from) {
    if (!seen.has(node)) {
      seen.add(node)
      pending.push(node)
    }
  }
  for (let node = pending.pop(); node !== undefined; node = pending.pop()) {
    for (const to of next[node] ?? []) {
      if (seen.has(to)) continue
      seen.add(to)
      pending.push(to)
    }
  }
  return seen
}

/** `next` turned around: who feeds each node. */
export function reversed(next: Successors): number[][] {
  const back = next.map((): number[] => [])
  next.forEach((edges, from) => {
    for (const to of edges) back[to]?.push(from)
  })
  return back
}

class MinHeap {
  private readonly items: number[] = []

  push(value: number): void {
    const items = this.items
    items.push(value)
    let at = items.length - 1
    while (at > 0) {
      const up = (at - 1) >> 1
      if ((items[up] as number) <= value) break
      items[at] = items[up] as number
      at = up
    }
    items[at] = value
  }

  pop(): number | undefined {
    const items = this.items
    const top = items[0]
    const last = items.pop()
    if (top === undefined || last === undefined || items.length === 0) return top
    let at = 0
    for (;;) {
      const left = 2 * at + 1
      if (left >= items.length) break
      const right = left + 1
      const child =
        right < items.length && (items[right] as number) < (items[left] as number) ? right : left
      if ((items[child] as number) >= last) break
      items[at] = items[child] as number
      at = child
    }
    items[at] = last
    return top
  }
}
