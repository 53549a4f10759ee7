import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import {
  canvasNode,
  GROUPS_KEY,
  moveNodes,
  type Area,
  type CanvasNode,
  type EditorDoc,
  type Size,
} from '../../src-renderer/src/flows/document'
import { makeRoom, ROOM_GAP } from '../../src-renderer/src/flows/document/makeRoom'
import { u } from './shell-transport'

const SMALL: Size = { width: 220, height: 100 }
/** The same node once a run's image preview shows. */
const GROWN: Size = { width: 220, height: 290 }

function nodeAt(n: number, x: number, y: number): CanvasNode {
  return canvasNode({
    id: u(n),
    label: `Node ${n}`,
    type_code: 'builtin',
    builtin_node_code: 'text',
    x,
    y,
    config: {},
    inputs: [],
    outputs: [{ id: u(100 + n), name: 'out', variable_type_code: 'image' }],
  })
}

function docOf(nodes: CanvasNode[], groups: string[][] = []): EditorDoc {
  return {
    flow: {
      id: u(999),
      name: 'Flow',
      ...(groups.length > 0
        ? {
            context_variables: {
              [GROUPS_KEY]: groups.map((ids, i) => ({
                id: `g${String(i)}`,
                label: `Group ${String(i)}`,
                node_ids: ids,
              })),
            },
          }
        : {}),
    },
    nodes,
    hadNodes: true,
  }
}

const sizesOf = (doc: EditorDoc, size: Size, except: Record<string, Size> = {}) =>
  Object.fromEntries(doc.nodes.map((node) => [node.id, except[node.id] ?? size]))

const boxes = (doc: EditorDoc, sizes: Record<string, Size>): Map<string, Area> =>
  new Map(
    doc.nodes.map((node) => [node.id, { ...node.position, ...(sizes[node.id] ?? SMALL) }] as const),
  )

const overlap = (a: Area, b: Area) =>
  a.x < b.x + b.width && b.x < a.x + a.width && a.y < b.y + b.height && b.y < a.y + a.height

/** Every pair of nodes that overlap. */
function overlaps(doc: EditorDoc, sizes: Record<string, Size>): string[] {
  const all = [...boxes(doc, sizes)]
  const found: string[] = []
  for (let i = 0; i < all.length; i++) {
    for (let j = i + 1; j < all.length; j++) {
      const [a, boxA] = all[i] ?? []
      const [b, boxB] = all[j] ?? []
      if (boxA && boxB && overlap(boxA, boxB)) found.push(`${String(a)} × ${String(b)}`)
    }
  }
  return found
}

describe('making room for a grown node', () => {
  it('pushes the node below down to just past the grown one, and leaves the rest', () => {
    // 1 above 2 (a 40 px gap), 3 to the right of both, far enough not to be touched.
    const doc = docOf([nodeAt(1, 0, 0), nodeAt(2, 0, 140), nodeAt(3, 400, 0)])
    const before = sizesOf(doc, SMALL)
    const after = sizesOf(doc, SMALL, { [u(1)]: GROWN })
    expect(overlaps(doc, after)).toEqual([`${u(1)} × ${u(2)}`])

    const moved = makeRoom(doc, before, after)

    expect([...moved]).toEqual([[u(2), { x: 0, y: GROWN.height + ROOM_GAP }]])
    expect(overlaps(moveNodes(doc, moved), after)).toEqual([])
  })

  it('moves nothing when no node grew, or when the grown one covers nothing', () => {
    const doc = docOf([nodeAt(1, 0, 0), nodeAt(2, 0, 400)])
    const before = sizesOf(doc, SMALL)
    expect(makeRoom(doc, before, before).size).toBe(0)
    expect(makeRoom(doc, before, sizesOf(doc, SMALL, { [u(1)]: GROWN })).size).toBe(0)
    // Measured for the first time: not a growth.
    expect(makeRoom(doc, {}, sizesOf(doc, GROWN)).size).toBe(0)
  })

  it('takes the shorter way out: right for a neighbour mostly beside the grown node', () => {
    // 2 starts below 1 but 200 px to the right: 44 px to its right clears it, 174 px down would.
    const doc = docOf([nodeAt(1, 0, 0), nodeAt(2, 200, 140)])
    const moved = makeRoom(doc, sizesOf(doc, SMALL), sizesOf(doc, SMALL, { [u(1)]: GROWN }))
    expect(moved.get(u(2))).toEqual({ x: 220 + ROOM_GAP, y: 140 })
  })

  it('pushes on down a column: a pushed node pushes the one below it', () => {
    const doc = docOf([nodeAt(1, 0, 0), nodeAt(2, 0, 140), nodeAt(3, 0, 280)])
    const after = sizesOf(doc, SMALL, { [u(1)]: GROWN })
    const moved = makeRoom(doc, sizesOf(doc, SMALL), after)
    expect(moved.get(u(2))).toEqual({ x: 0, y: 314 })
    expect(moved.get(u(3))).toEqual({ x: 0, y: 314 + 100 + ROOM_GAP })
    expect(overlaps(moveNodes(doc, moved), after)).toEqual([])
  })

  it('moves a neighbour’s whole group by the same distance, so the group keeps its shape', () => {
    // 2 and 3 are a group below 1; 3 is off to the right of 1, yet moves with 2.
    const doc = docOf([nodeAt(1, 0, 0), nodeAt(2, 0, 140), nodeAt(3, 300, 140)], [[u(2), u(3)]])
    const after = sizesOf(doc, SMALL, { [u(1)]: GROWN })
    const moved = makeRoom(doc, sizesOf(doc, SMALL), after)
    const dy = GROWN.height + ROOM_GAP - 140
    expect(moved.get(u(2))).toEqual({ x: 0, y: 140 + dy })
    expect(moved.get(u(3))).toEqual({ x: 300, y: 140 + dy })
  })

  it('moves a neighbour in the grown node’s own group alone', () => {
    const doc = docOf([nodeAt(1, 0, 0), nodeAt(2, 0, 140), nodeAt(3, 300, 0)], [[u(1), u(2), u(3)]])
    const moved = makeRoom(doc, sizesOf(doc, SMALL), sizesOf(doc, SMALL, { [u(1)]: GROWN }))
    expect([...moved.keys()]).toEqual([u(2)])
  })

  it('leaves nodes that overlapped already as they were put', () => {
    const doc = docOf([nodeAt(1, 0, 0), nodeAt(2, 20, 50)])
    const moved = makeRoom(doc, sizesOf(doc, SMALL), sizesOf(doc, SMALL, { [u(1)]: GROWN }))
    expect(moved.size).toBe(0)
  })

  it('leaves no overlap behind in any layout that had none, and only ever moves down or right', () => {
    const cell = fc.record({
      col: fc.integer({ min: 0, max: 5 }),
      row: fc.integer({ min: 0, max: 5 }),
    })
    fc.assert(
      fc.property(
        fc.uniqueArray(cell, { minLength: 2, maxLength: 14, selector: (c) => `${c.col},${c.row}` }),
        fc.array(fc.boolean(), { minLength: 14, maxLength: 14 }),
        fc.array(fc.integer({ min: 0, max: 30 }), { minLength: 14, maxLength: 14 }),
        fc.boolean(),
        (cells, grows, jitter, grouped) => {
          // A grid with gaps of at least 20 px: no overlaps to start with.
          const nodes = cells.map((c, i) =>
            nodeAt(i + 1, c.col * 260 + (jitter[i] ?? 0), c.row * 140 + (jitter[13 - i] ?? 0)),
          )
          const groups = grouped && nodes.length >= 4 ? [[u(2), u(3)], [u(4)]] : []
          const doc = docOf(nodes, groups)
          const before = sizesOf(doc, SMALL)
          expect(overlaps(doc, before)).toEqual([])
          const after = sizesOf(
            doc,
            SMALL,
            Object.fromEntries(nodes.filter((_, i) => grows[i]).map((node) => [node.id, GROWN])),
          )
          const moved = makeRoom(doc, before, after)
          const result = moveNodes(doc, moved)
          // Without groups, no overlap is left. Groups interleaved so that they push each other
          // without end are left alone rather than thrown far away.
          if (groups.length === 0 || moved.size > 0) expect(overlaps(result, after)).toEqual([])
          for (const node of doc.nodes) {
            const to = moved.get(node.id)
            if (!to) continue
            expect(to.x).toBeGreaterThanOrEqual(node.position.x)
            expect(to.y).toBeGreaterThanOrEqual(node.position.y)
          }
          // Group members moved by one distance (unless one of them grew: it pushes the other).
          if (groups.length > 0 && grows[1] !== true && grows[2] !== true) {
            const [a, b] = [u(2), u(3)].map((id) => {
              const node = doc.nodes.find((n) => n.id === id)
              const to = moved.get(id) ?? node?.position
              return {
                dx: (to?.x ?? 0) - (node?.position.x ?? 0),
                dy: (to?.y ?? 0) - (node?.position.y ?? 0),
              }
            })
            expect(a).toEqual(b)
          }
        },
      ),
      { numRuns: 1000 },
    )
  })
})
