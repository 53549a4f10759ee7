import { randomUUID } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { parseFlowDocument, type FlowDocument } from '../../src-main/executor'
import { parseAxes, SweepError } from '../../src-main/sweeps/axes'
import { planSweep } from '../../src-main/sweeps/plan'
import { refusalOf } from '../helpers/refusal'

/**
 * Which nodes a sweep varies (issue 21): a 3-node flow, a prompt template fed by a flow input,
 * a picture from it and an upscale of the picture, swept on different inputs.
 */

const ids = {
  template: randomUUID(),
  text: randomUUID(),
  picture: randomUUID(),
  image: randomUUID(),
  upscale: randomUUID(),
}

function threeNodes(): FlowDocument {
  const parsed = parseFlowDocument({
    id: randomUUID(),
    name: 'Harbour, larger',
    inputs: [{ id: randomUUID(), name: 'subject', variable_type_code: 'text' }],
    nodes: [
      {
        id: ids.template,
        label: 'Prompt',
        type_code: 'builtin',
        builtin_node_code: 'prompt_template',
        config: { flow_inputs: { subject: 'subject' } },
        inputs: [{ id: randomUUID(), name: 'subject', variable_type_code: 'text' }],
        outputs: [{ id: ids.text, name: 'text', variable_type_code: 'text' }],
      },
      {
        id: ids.picture,
        label: 'Picture',
        type_code: 'model',
        model_id: randomUUID(),
        inputs: [
          {
            id: randomUUID(),
            name: 'prompt',
            variable_type_code: 'text',
            source_output_id: ids.text,
          },
          { id: randomUUID(), name: 'seed', variable_type_code: 'seed' },
        ],
        outputs: [{ id: ids.image, name: 'image', variable_type_code: 'image' }],
      },
      {
        id: ids.upscale,
        label: 'Upscale',
        slug: 'upscale',
        type_code: 'model',
        model_id: randomUUID(),
        inputs: [
          {
            id: randomUUID(),
            name: 'image',
            variable_type_code: 'image',
            source_output_id: ids.image,
          },
          { id: randomUUID(), name: 'scale', variable_type_code: 'integer' },
        ],
        outputs: [{ id: randomUUID(), name: 'image', variable_type_code: 'image' }],
      },
    ],
  })
  if (!parsed.ok) throw new Error(JSON.stringify(parsed.problems))
  return parsed.flow
}

const refusal = (run: () => unknown) => refusalOf(SweepError, run)

describe('what a sweep varies', () => {
  it('shares the nodes upstream of every axis, and varies the rest', () => {
    const plan = planSweep(threeNodes(), parseAxes(['Picture.seed=1..10', 'upscale.scale=2,4']))
    expect(plan.varying).toEqual([ids.picture, ids.upscale])
    expect(plan.shared).toEqual([ids.template])
    expect(plan.axes).toEqual([
      { key: 'Picture.seed', kind: 'node_input', nodeId: ids.picture, name: 'seed' },
      { key: 'upscale.scale', kind: 'node_input', nodeId: ids.upscale, name: 'scale' },
    ])
  })

  it('varies everything downstream of a swept flow input', () => {
    const plan = planSweep(threeNodes(), parseAxes(['subject=a harbour,a pier']))
    expect(plan.varying).toEqual([ids.template, ids.picture, ids.upscale])
    expect(plan.shared).toEqual([])
  })

  it('varies only the last node when only it is swept', () => {
    const plan = planSweep(threeNodes(), parseAxes([`${ids.upscale}.scale=2,3,4`]))
    expect(plan.varying).toEqual([ids.upscale])
    expect(plan.shared).toEqual([ids.template, ids.picture])
  })

  it('says which names the flow has when an axis names none of them', () => {
    const flow = threeNodes()
    const noInput = refusal(() => planSweep(flow, parseAxes(['style=oil,ink'])))
    expect(noInput.code).toBe('AXIS_UNKNOWN_INPUT')
    expect(noInput.message).toContain('its inputs: subject')
    const noNode = refusal(() => planSweep(flow, parseAxes(['Caption.seed=1..2'])))
    expect(noNode.code).toBe('AXIS_UNKNOWN_NODE')
    expect(noNode.message).toContain('"Picture"')
    const noNodeInput = refusal(() => planSweep(flow, parseAxes(['Picture.steps=1..2'])))
    expect(noNodeInput.code).toBe('AXIS_UNKNOWN_INPUT')
    expect(noNodeInput.message).toContain('its inputs: prompt, seed')
    const twice = parseFlowDocument({
      ...flow,
      nodes: flow.nodes.map((node) => ({ ...node, label: 'Same' })),
    })
    if (!twice.ok) throw new Error(JSON.stringify(twice.problems))
    expect(refusal(() => planSweep(twice.flow, parseAxes(['Same.seed=1..2']))).code).toBe(
      'AXIS_AMBIGUOUS_NODE',
    )
  })
})
