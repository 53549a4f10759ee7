import { randomUUID } from 'node:crypto'

/**
 * A flow file of one model node: a prompt (flow input) → the model → picture (flow output), at
 * `size`×`size`. What the IPC tests run when the run itself is not what they test.
 */
export function pictureFlow(id: string, name: string, modelId: string, size: number) {
  const port = (portName: string, type: string, value: unknown = null) => ({
    id: randomUUID(),
    name: portName,
    variable_type_code: type,
    source_output_id: null,
    value,
  })
  return {
    id,
    name,
    inputs: [{ id: randomUUID(), name: 'prompt', variable_type_code: 'text', is_required: true }],
    outputs: [{ id: randomUUID(), name: 'picture', variable_type_code: 'image' }],
    nodes: [
      {
        id: randomUUID(),
        label: 'picture',
        slug: 'picture',
        type_code: 'model',
        model_id: modelId,
        builtin_node_code: null,
        config: { flow_inputs: { prompt: 'prompt' }, flow_outputs: { image: 'picture' } },
        inputs: [
          port('prompt', 'text'),
          port('width', 'integer', size),
          port('height', 'integer', size),
        ],
        outputs: [{ id: randomUUID(), name: 'image', variable_type_code: 'image' }],
      },
    ],
  }
}
