import { describe, expect, it } from 'vitest'
import { forcedNodeIds } from '../../src-main/cli/force'

const node = (id: string, label: string, slug: string | null = null) => ({ id, label, slug })
const flow = {
  nodes: [
    node('n-1', 'Draw', 'draw'),
    node('n-2', 'Upscale'),
    node('n-3', 'Caption'),
    node('n-4', 'Caption'),
  ],
} as unknown as Parameters<typeof forcedNodeIds>[0]

describe('atelier run --force', () => {
  it('takes a node by its id, its slug or its label', () => {
    expect(forcedNodeIds(flow, ['n-2', 'draw', 'Upscale'])).toEqual(['n-2', 'n-1', 'n-2'])
  })

  it('refuses a label several nodes share, listing their ids', () => {
    expect(() => forcedNodeIds(flow, ['Caption'])).toThrow(
      expect.objectContaining({
        code: 'NODE_AMBIGUOUS',
        message: expect.stringContaining('(n-3, n-4)'),
      }),
    )
  })

  it('refuses a name no node has, listing the labels', () => {
    expect(() => forcedNodeIds(flow, ['Paint'])).toThrow(
      expect.objectContaining({
        code: 'NODE_NOT_FOUND',
        message: expect.stringContaining('"Draw", "Upscale", "Caption", "Caption"'),
      }),
    )
  })
})
