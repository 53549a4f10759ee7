import { describe, expect, it } from 'vitest'
import {
  autoLayout,
  canvasNode,
  grownHeight,
  spotInView,
  type Area,
  type CanvasNode,
  type FileNode,
} from '../../src-renderer/src/flows/document'
import { u } from './shell-transport'

/** A node at (x, y) with one output of `type`, measured 220 × 100. */
function nodeAt(n: number, x: number, y: number, type = 'text'): CanvasNode {
  const record: FileNode = {
    id: u(n),
    label: `Node ${n}`,
    type_code: 'builtin',
    builtin_node_code: 'text',
    x,
    y,
    config: {},
    inputs: [],
    outputs: [{ id: u(100 + n), name: 'out', variable_type_code: type }],
  }
  return canvasNode(record)
}

const SIZE = { width: 220, height: 100 }
const sizes = (nodes: readonly CanvasNode[]) =>
  Object.fromEntries(nodes.map((node) => [node.id, SIZE]))

const within = (x: number, y: number, view: Area) =>
  x >= view.x && y >= view.y && x + 220 <= view.x + view.width && y + 120 <= view.y + view.height

describe('a node added by a click', () => {
  it('lands in view and on no other node, however far right the flow reaches', () => {
    // The flow reaches far to the right of what is in view: "right of everything" is off view.
    const nodes = [nodeAt(1, 0, 0), nodeAt(2, 3000, 0)]
    const view: Area = { x: -100, y: -100, width: 900, height: 600 }
    const spot = spotInView(nodes, sizes(nodes), view)
    expect(within(spot.x, spot.y, view)).toBe(true)
    const clear = nodes.every(
      (node) =>
        spot.x + 220 <= node.position.x ||
        spot.x >= node.position.x + 220 ||
        spot.y + 120 <= node.position.y ||
        spot.y >= node.position.y + grownHeight(node, 100, false),
    )
    expect(clear).toBe(true)
  })

  it('goes to the middle of the view when the view is full', () => {
    const view: Area = { x: 0, y: 0, width: 300, height: 200 }
    const nodes = [nodeAt(1, 0, 0)]
    const size = { width: 220, height: 120 }
    // Centred on the view's centre (150, 100).
    expect(spotInView(nodes, sizes(nodes), view, size)).toEqual({ x: 40, y: 40 })
  })
})

describe('tidying up', () => {
  it('leaves room under a node for the preview a run will add', () => {
    const image = nodeAt(1, 0, 0, 'image')
    expect(grownHeight(image, 100, false)).toBeGreaterThanOrEqual(100 + 180)
    expect(grownHeight(image, 300, true)).toBe(300)
    // Two image nodes side by side in the same rank: stacked with room for both previews.
    const other = nodeAt(2, 0, 50, 'image')
    const positions = autoLayout([image, other], sizes([image, other]))
    const [a, b] = [positions.get(image.id), positions.get(other.id)]
    if (!a || !b) throw new Error('not laid out')
    const [top, bottom] = a.y < b.y ? [a, b] : [b, a]
    expect(bottom.y - top.y).toBeGreaterThanOrEqual(grownHeight(image, 100, false))
  })
})
