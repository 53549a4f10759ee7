import { describe, expect, it } from 'vitest'
import { parseFlowDocument, type FlowProblem } from '../../src-shared/domain/flow'
import type { FlowRunEvent } from '../../src-shared/domain/flow-run'
import type { PaletteItem } from '../../src-shared/domain/flow-editor'
import {
  applyNodeEvent,
  applyRunEvent,
  autoLayout,
  connect,
  copyNodes,
  docToFlowFile,
  edgesOf,
  feedOf,
  firstImage,
  firstText,
  flowFileToDoc,
  indexProblems,
  inputKey,
  judgeConnection,
  mapInputToFlowInput,
  mapOutputToFlowOutput,
  moveNodes,
  NODE_LOG_LIMIT,
  nodeFromPalette,
  pasteNodes,
  portMapping,
  rebaseFlowFile,
  removeFlowInput,
  removeNodes,
  setInputValue,
  updateFlowInput,
  type EditorDoc,
  type NodeRunView,
} from '../../src-renderer/src/flows/document'

// ---- Ids: readable numbers as uuids.

const u = (n: number) => `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`
const FLOW = u(1)
const PROMPT = u(10)
const GENERATE = u(20)
const RESIZE = u(30)
const PROMPT_TEXT = u(11)
const PROMPT_OUT = u(12)
const GEN_PROMPT = u(21)
const GEN_SEED = u(22)
const GEN_STEPS = u(23)
const GEN_IMAGE = u(24)
const RESIZE_IMAGE = u(31)
const RESIZE_WIDTH = u(32)
const RESIZE_OUT = u(33)
const SUBJECT = u(40)
const SEED = u(41)
const RESULT = u(50)
const MODEL = u(900)

/** A flow file as a person writes it: what the service fills in by itself is left out. */
const handWritten = {
  id: FLOW,
  name: 'Portrait',
  description: 'A prompt, an image, a smaller image.',
  inputs: [
    { id: SUBJECT, name: 'subject', variable_type_code: 'text', is_required: true },
    { id: SEED, name: 'seed', variable_type_code: 'seed', default_value: 7 },
  ],
  outputs: [{ id: RESULT, name: 'result', variable_type_code: 'image' }],
  nodes: [
    {
      id: PROMPT,
      label: 'Prompt',
      type_code: 'builtin',
      builtin_node_code: 'prompt_template',
      x: 40,
      y: 80,
      config: { flow_inputs: { subject: 'subject' } },
      inputs: [
        {
          id: PROMPT_TEXT,
          name: 'subject',
          variable_type_code: 'text',
          is_required: true,
        },
      ],
      outputs: [{ id: PROMPT_OUT, name: 'prompt', variable_type_code: 'text' }],
    },
    {
      id: GENERATE,
      label: 'Generate',
      type_code: 'model',
      model_id: MODEL,
      x: 340,
      y: 60,
      width: 260,
      config: { flow_inputs: { seed: 'seed' } },
      inputs: [
        {
          id: GEN_PROMPT,
          name: 'prompt',
          variable_type_code: 'text',
          source_output_id: PROMPT_OUT,
        },
        { id: GEN_SEED, name: 'seed', variable_type_code: 'seed' },
        {
          id: GEN_STEPS,
          name: 'steps',
          variable_type_code: 'integer',
          validator_code: 'range',
          validator_attrs: { min: 1, max: 50 },
          value: 30,
        },
      ],
      outputs: [{ id: GEN_IMAGE, name: 'image', variable_type_code: 'image' }],
    },
    {
      id: RESIZE,
      label: 'Resize',
      type_code: 'builtin',
      builtin_node_code: 'image_resize',
      x: 680,
      y: 90,
      config: { flow_outputs: { image: 'result' } },
      inputs: [
        {
          id: RESIZE_IMAGE,
          name: 'image',
          variable_type_code: 'image',
          source_output_id: GEN_IMAGE,
        },
        { id: RESIZE_WIDTH, name: 'width', variable_type_code: 'integer', value: 512 },
      ],
      outputs: [{ id: RESIZE_OUT, name: 'image', variable_type_code: 'image' }],
    },
  ],
}

/** The same flow as the main process sends it: read by the shared parser, every field filled. */
function storedFlow(): Record<string, unknown> {
  const parsed = parseFlowDocument(structuredClone(handWritten))
  if (!parsed.ok) throw new Error(JSON.stringify(parsed.problems))
  return JSON.parse(JSON.stringify(parsed.flow)) as Record<string, unknown>
}

const nodeOf = (doc: EditorDoc, id: string) => {
  const node = doc.nodes.find((candidate) => candidate.id === id)
  if (!node) throw new Error(`no node ${id}`)
  return node
}

const inputOf = (doc: EditorDoc, nodeId: string, inputId: string) => {
  const input = nodeOf(doc, nodeId).data.record.inputs?.find((item) => item.id === inputId)
  if (!input) throw new Error(`no input ${inputId}`)
  return input
}

let counter = 1000
const sequentialId = () => u(++counter)

describe('flow file ↔ editor document', () => {
  it('round-trips a stored flow unchanged: nodes, positions, edges, values, flow inputs', () => {
    const file = storedFlow()
    const doc = flowFileToDoc(file)

    expect(doc.nodes.map((node) => [node.id, node.position, node.width])).toEqual([
      [PROMPT, { x: 40, y: 80 }, 220],
      [GENERATE, { x: 340, y: 60 }, 260],
      [RESIZE, { x: 680, y: 90 }, 220],
    ])
    expect(
      edgesOf(doc.nodes).map((edge) => [
        edge.source,
        edge.sourceHandle,
        edge.target,
        edge.targetHandle,
      ]),
    ).toEqual([
      [PROMPT, PROMPT_OUT, GENERATE, GEN_PROMPT],
      [GENERATE, GEN_IMAGE, RESIZE, RESIZE_IMAGE],
    ])
    expect(doc.flow.inputs?.map((input) => input.name)).toEqual(['subject', 'seed'])

    const back = docToFlowFile(doc)
    expect(back).toEqual(file)
    expect(parseFlowDocument(back).ok).toBe(true)
  })

  it('adds nothing to a hand-written file that leaves defaults out', () => {
    const file = structuredClone(handWritten) as unknown as Record<string, unknown>
    expect(docToFlowFile(flowFileToDoc(file))).toEqual(handWritten)
  })

  it('writes what the editor changed, and only that', () => {
    const file = storedFlow()
    let doc = flowFileToDoc(file)
    doc = moveNodes(doc, new Map([[RESIZE, { x: 900, y: 120 }]]))
    doc = setInputValue(doc, GENERATE, GEN_STEPS, 12)
    const back = docToFlowFile(doc) as { nodes: Record<string, unknown>[] }
    const original = file as { nodes: Record<string, unknown>[] }

    expect(back.nodes[2]).toEqual({ ...original.nodes[2], x: 900, y: 120 })
    expect(back.nodes[0]).toEqual(original.nodes[0])
    expect(inputOf(flowFileToDoc(back), GENERATE, GEN_STEPS).value).toBe(12)
  })

  it('refuses JSON that is not a flow file, saying what to do', () => {
    expect(() => flowFileToDoc({ name: 'no id' })).toThrow(/cannot be opened.*Export it again/)
    expect(() => flowFileToDoc({ id: FLOW, name: 'x', nodes: [{ id: 'a' }] })).toThrow(
      /nodes are not a list of nodes/,
    )
  })
})

describe('connections', () => {
  it('lets types of one family connect and refuses the rest as they are drawn', () => {
    const doc = flowFileToDoc(storedFlow())
    const textIntoImage = {
      source: PROMPT,
      sourceHandle: PROMPT_OUT,
      target: RESIZE,
      targetHandle: RESIZE_IMAGE,
    }
    expect(judgeConnection(doc.nodes, textIntoImage)).toEqual({
      ok: false,
      reason: 'A text output cannot feed a image input.',
    })
    expect(connect(doc, textIntoImage)).toBe(doc)
    expect(
      judgeConnection(doc.nodes, {
        source: GENERATE,
        sourceHandle: GEN_IMAGE,
        target: GENERATE,
        targetHandle: GEN_PROMPT,
      }).ok,
    ).toBe(false)
    expect(
      judgeConnection(doc.nodes, {
        source: RESIZE,
        sourceHandle: RESIZE_OUT,
        target: GENERATE,
        targetHandle: GEN_SEED,
      }),
    ).toEqual({ ok: false, reason: 'A image output cannot feed a seed input.' })
    expect(
      judgeConnection(doc.nodes, {
        source: RESIZE,
        sourceHandle: RESIZE_OUT,
        target: RESIZE,
        targetHandle: RESIZE_IMAGE,
      }),
    ).toEqual({ ok: false, reason: 'A node cannot feed itself.' })
    expect(
      judgeConnection(doc.nodes, {
        source: PROMPT,
        sourceHandle: PROMPT_OUT,
        target: GENERATE,
        targetHandle: GEN_PROMPT,
      }),
    ).toEqual({ ok: true, fanOut: false })
  })

  it('fans a list out only into a model node', () => {
    const doc = flowFileToDoc(storedFlow())
    const lister = nodeFromPalette(
      doc.nodes,
      paletteItem({ outputs: [port('images', 'image[]')] }),
      { x: 0, y: 0 },
      sequentialId,
    )
    const withLister = { ...doc, nodes: [...doc.nodes, lister] }
    const listOut = lister.data.record.outputs?.[0]?.id ?? ''
    expect(
      judgeConnection(withLister.nodes, {
        source: lister.id,
        sourceHandle: listOut,
        target: RESIZE,
        targetHandle: RESIZE_IMAGE,
      }),
    ).toEqual({ ok: false, reason: 'A list of image[] only fans out into a model node.' })
  })

  it('feeds an input from one place only: edge, flow input or value', () => {
    let doc = flowFileToDoc(storedFlow())
    expect(feedOf(nodeOf(doc, GENERATE).data.record, inputOf(doc, GENERATE, GEN_SEED))).toEqual({
      kind: 'flowInput',
      name: 'seed',
    })
    doc = setInputValue(doc, GENERATE, GEN_SEED, 99)
    expect(portMapping(nodeOf(doc, GENERATE).data.record, 'flow_inputs')).toEqual({})
    expect(inputOf(doc, GENERATE, GEN_SEED).value).toBe(99)

    doc = mapInputToFlowInput(doc, GENERATE, GEN_SEED, 'seed')
    expect(inputOf(doc, GENERATE, GEN_SEED).value).toBeNull()

    doc = setInputValue(doc, RESIZE, RESIZE_WIDTH, 256)
    doc = connect(doc, {
      source: PROMPT,
      sourceHandle: PROMPT_OUT,
      target: GENERATE,
      targetHandle: GEN_SEED,
    })
    // A refused edge leaves the input as it was.
    expect(inputOf(doc, GENERATE, GEN_SEED).source_output_id).toBeNull()
    expect(portMapping(nodeOf(doc, GENERATE).data.record, 'flow_inputs')).toEqual({ seed: 'seed' })
  })

  it('disconnects what a removed node fed, instead of leaving an edge to nothing', () => {
    const doc = removeNodes(flowFileToDoc(storedFlow()), new Set([GENERATE]))
    expect(doc.nodes.map((node) => node.id)).toEqual([PROMPT, RESIZE])
    expect(inputOf(doc, RESIZE, RESIZE_IMAGE).source_output_id).toBeNull()
    expect(edgesOf(doc.nodes)).toEqual([])
  })

  it('keeps a flow output filled by one node output at a time', () => {
    let doc = flowFileToDoc(storedFlow())
    doc = mapOutputToFlowOutput(doc, GENERATE, 'image', 'result')
    expect(portMapping(nodeOf(doc, GENERATE).data.record, 'flow_outputs')).toEqual({
      image: 'result',
    })
    expect(nodeOf(doc, RESIZE).data.record.config).toEqual({})
  })

  it('follows a renamed flow input in every mapping, and drops the mappings of a removed one', () => {
    let doc = flowFileToDoc(storedFlow())
    doc = updateFlowInput(doc, SUBJECT, { name: 'topic' })
    expect(portMapping(nodeOf(doc, PROMPT).data.record, 'flow_inputs')).toEqual({
      subject: 'topic',
    })
    doc = removeFlowInput(doc, SEED)
    expect(nodeOf(doc, GENERATE).data.record.config).toEqual({})
  })
})

function port(name: string, variableType: string) {
  return {
    name,
    displayName: null,
    variableType,
    required: false,
    defaultValue: null,
    validatorCode: null,
    validatorAttrs: null,
    description: null,
  }
}

function paletteItem(overrides: Partial<PaletteItem> = {}): PaletteItem {
  return {
    kind: 'builtin',
    target: 'image_list',
    name: 'Image list',
    category: 'Built-in',
    description: null,
    priceMicro: 0,
    inputs: [],
    outputs: [],
    ...overrides,
  }
}

describe('new nodes, copy and paste', () => {
  it('adds a palette entry as a node with its ports, that the flow format accepts', () => {
    const doc = flowFileToDoc(storedFlow())
    const node = nodeFromPalette(
      doc.nodes,
      paletteItem({
        kind: 'model',
        target: u(901),
        name: 'Generate',
        inputs: [{ ...port('prompt', 'text'), required: true }],
        outputs: [port('image', 'image')],
      }),
      { x: 10.6, y: 20.2 },
      sequentialId,
    )
    expect(node.data.record.label).toBe('Generate 2')
    expect(node.data.record.model_id).toBe(u(901))
    expect(node.position).toEqual({ x: 11, y: 20 })
    expect(node.data.record.inputs?.[0]).toMatchObject({
      name: 'prompt',
      variable_type_code: 'text',
      is_required: true,
      value: null,
      source_output_id: null,
    })
    const file = docToFlowFile({ ...doc, nodes: [...doc.nodes, node] })
    expect(parseFlowDocument(file).ok).toBe(true)
  })

  it('pastes copies with new ids, their edges among them, and no edge from outside', () => {
    const doc = flowFileToDoc(storedFlow())
    const clipboard = copyNodes(doc, new Set([GENERATE, RESIZE]))
    expect(clipboard?.nodes).toHaveLength(2)
    if (!clipboard) return
    const { doc: pasted, pastedIds } = pasteNodes(doc, clipboard, sequentialId)

    expect(pasted.nodes).toHaveLength(5)
    const [generate, resize] = pastedIds.map((id) => nodeOf(pasted, id))
    if (!generate || !resize) throw new Error('nothing pasted')
    expect(generate.data.record.label).toBe('Generate 2')
    expect(generate.position).toEqual({ x: 380, y: 100 })
    const generateOut = generate.data.record.outputs?.[0]?.id
    expect(generateOut).not.toBe(GEN_IMAGE)
    // The edge between the two copies follows them; the one from "Prompt" is not copied.
    expect(resize.data.record.inputs?.[0]?.source_output_id).toBe(generateOut)
    expect(generate.data.record.inputs?.[0]?.source_output_id).toBeNull()
    // A flow output takes one node output: the copy does not fill "result" too.
    expect(portMapping(resize.data.record, 'flow_outputs')).toEqual({})
    expect(parseFlowDocument(docToFlowFile(pasted)).ok).toBe(true)
  })

  it('lays nodes out left to right, in the order data flows', () => {
    const doc = flowFileToDoc(storedFlow())
    const positions = autoLayout(doc.nodes, {})
    const x = (id: string) => positions.get(id)?.x ?? Number.NaN
    expect(x(PROMPT)).toBeLessThan(x(GENERATE))
    expect(x(GENERATE)).toBeLessThan(x(RESIZE))
  })

  it('moves a flow file into a copy: its id, its name and every flow_id inside', () => {
    const copy = rebaseFlowFile(storedFlow(), { id: u(2), name: 'Portrait copy' }) as {
      id: string
      name: string
      nodes: { flow_id: string }[]
      inputs: { flow_id: string }[]
    }
    expect(copy.id).toBe(u(2))
    expect(copy.name).toBe('Portrait copy')
    expect(new Set([...copy.nodes, ...copy.inputs].map((item) => item.flow_id))).toEqual(
      new Set([u(2)]),
    )
    expect(parseFlowDocument(copy).ok).toBe(true)
  })
})

describe('problems placed on the canvas', () => {
  it('puts each problem on the node, input or flow port it names, or its path names', () => {
    const doc = flowFileToDoc(storedFlow())
    const problems: FlowProblem[] = [
      {
        code: 'MISSING_REQUIRED_INPUT',
        message: 'Input "subject" of node "Prompt" is required.',
        path: 'nodes.0.inputs.0',
        nodeId: PROMPT,
        inputName: 'subject',
      },
      { code: 'UNKNOWN_MODEL', message: 'No such model.', path: 'nodes.1.model_id' },
      {
        code: 'CYCLE',
        message: 'A loop.',
        path: 'nodes.2.inputs.0',
        nodeIds: [GENERATE, RESIZE],
      },
      { code: 'DUPLICATE_NAME', message: 'Two seeds.', path: 'inputs.1.name' },
      { code: 'UNMAPPED_FLOW_OUTPUT', message: 'Nothing fills it.', path: 'outputs.0' },
      { code: 'INVALID_FIELD', message: 'The name is empty.', path: 'name' },
    ]
    const index = indexProblems(problems, doc)

    expect(index.byNode.get(PROMPT)?.map((p) => p.code)).toEqual(['MISSING_REQUIRED_INPUT'])
    expect(index.byInput.get(inputKey(PROMPT, 'subject'))?.map((p) => p.code)).toEqual([
      'MISSING_REQUIRED_INPUT',
    ])
    expect(index.byNode.get(GENERATE)?.map((p) => p.code)).toEqual(['UNKNOWN_MODEL', 'CYCLE'])
    expect(index.byNode.get(RESIZE)?.map((p) => p.code)).toEqual(['CYCLE'])
    expect(index.byFlowInput.get(SEED)?.map((p) => p.code)).toEqual(['DUPLICATE_NAME'])
    expect(index.byFlowOutput.get(RESULT)?.map((p) => p.code)).toEqual(['UNMAPPED_FLOW_OUTPUT'])
    expect(index.flow.map((p) => p.code)).toEqual(['INVALID_FIELD'])
    expect(index.count).toBe(6)
  })
})

describe('live node states from run events', () => {
  const base = { flowRunId: 'run-1', attempt: 1 }
  const image = {
    kind: 'media',
    sha256: 'a'.repeat(64),
    content_type: 'image/png',
    url: 'atelier-media://a',
  }

  it('follows each node from queued to its end, with its clock, log, cost and outputs', () => {
    const events: [FlowRunEvent, number][] = [
      [{ type: 'node-queued', nodeId: GENERATE, ...base }, 1000],
      [{ type: 'node-running', nodeId: GENERATE, ...base }, 1100],
      [{ type: 'node-progress', nodeId: GENERATE, fraction: 0.5, ...base }, 1500],
      [{ type: 'node-log', nodeId: GENERATE, level: 'info', message: 'step 15/30', ...base }, 1600],
      [{ type: 'node-cost', nodeId: GENERATE, costMicro: 20_000, ...base }, 1700],
      [
        {
          type: 'node-succeeded',
          nodeId: GENERATE,
          outputs: { image },
          costMicro: 20_500,
          ...base,
        },
        2100,
      ],
      [{ type: 'node-skipped', nodeId: RESIZE, reason: 'upstream-failed', ...base }, 2200],
      [
        {
          type: 'node-failed',
          nodeId: PROMPT,
          error: { code: 'TEMPLATE', message: 'Unknown variable.' },
          ...base,
        },
        2300,
      ],
    ]
    let views: Record<string, NodeRunView> = {}
    const seen: string[] = []
    for (const [event, now] of events) {
      views = applyNodeEvent(views, event, now)
      seen.push(views[GENERATE]?.state ?? '-')
    }
    expect(seen.slice(0, 6)).toEqual([
      'queued',
      'running',
      'running',
      'running',
      'running',
      'succeeded',
    ])
    expect(views[GENERATE]).toMatchObject({
      startedMs: 1100,
      endedMs: 2100,
      progress: 1,
      lastLog: { level: 'info', message: 'step 15/30' },
      costMicro: 20_500,
    })
    expect(firstImage(views[GENERATE]?.outputs ?? null)).toEqual(image)
    expect(views[RESIZE]).toMatchObject({ state: 'skipped', skipReason: 'upstream-failed' })
    expect(views[PROMPT]).toMatchObject({
      state: 'failed',
      lastLog: { level: 'error', message: 'Unknown variable.' },
      logs: [{ level: 'error', message: 'Unknown variable.' }],
    })
  })

  it('keeps the latest log lines of the attempt, the last one shown on its own', () => {
    let views: Record<string, NodeRunView> = applyNodeEvent(
      {},
      { type: 'node-running', nodeId: GENERATE, ...base },
      1,
    )
    const log = (message: string, level: 'info' | 'warning' = 'info') => {
      views = applyNodeEvent(
        views,
        { type: 'node-log', nodeId: GENERATE, level, message, ...base },
        2,
      )
    }
    const progress = (message: string) => {
      views = applyNodeEvent(
        views,
        { type: 'node-progress', nodeId: GENERATE, fraction: 0.5, message, ...base },
        2,
      )
    }
    progress('step 1/2')
    progress('step 1/2') // told again: one line
    log('same words')
    log('same words') // a log line told twice was said twice
    progress('step 2/2')
    expect(views[GENERATE]?.logs.map((line) => line.message)).toEqual([
      'step 1/2',
      'same words',
      'same words',
      'step 2/2',
    ])
    expect(views[GENERATE]?.lastLog).toEqual({ level: 'info', message: 'step 2/2' })

    for (let n = 1; n <= NODE_LOG_LIMIT + 10; n++)
      log(`line ${n}`, n === NODE_LOG_LIMIT + 10 ? 'warning' : 'info')
    const logs = views[GENERATE]?.logs ?? []
    expect(logs).toHaveLength(NODE_LOG_LIMIT)
    expect(logs[0]?.message).toBe('line 11')
    expect(logs.at(-1)).toEqual({ level: 'warning', message: `line ${NODE_LOG_LIMIT + 10}` })
    expect(views[GENERATE]?.lastLog).toBe(logs.at(-1))

    // A new attempt starts its own log.
    views = applyNodeEvent(views, { type: 'node-queued', nodeId: GENERATE, ...base, attempt: 2 }, 3)
    expect(views[GENERATE]).toMatchObject({ lastLog: null, logs: [] })
  })

  it('finds the words a node made for its preview, by the type of their port', () => {
    const ports = [
      { name: 'image', variable_type_code: 'image' },
      { name: 'evaluation_id', variable_type_code: 'uuid' },
      { name: 'captions', variable_type_code: 'text[]' },
      { name: 'prompt', variable_type_code: 'string' },
    ]
    expect(
      firstText({ image, evaluation_id: u(9), captions: ['', 'a red kite'], prompt: 'x' }, ports),
    ).toEqual({ name: 'captions', text: 'a red kite' })
    expect(firstText({ evaluation_id: u(9), prompt: 'a gold harbour' }, ports)).toEqual({
      name: 'prompt',
      text: 'a gold harbour',
    })
    // An id, blank words, no outputs: nothing to read.
    expect(firstText({ evaluation_id: u(9), prompt: '   ' }, ports)).toBeNull()
    expect(firstText(null, ports)).toBeNull()
    // A node that names no ports: any words it made.
    expect(firstText({ image, text: 'caption' })).toEqual({ name: 'text', text: 'caption' })
  })

  it('ignores a late event of an earlier attempt', () => {
    let views = applyNodeEvent(
      {},
      { type: 'node-running', nodeId: GENERATE, ...base, attempt: 2 },
      5,
    )
    views = applyNodeEvent(
      views,
      { type: 'node-failed', nodeId: GENERATE, ...base, error: { code: 'X', message: 'old' } },
      6,
    )
    expect(views[GENERATE]).toMatchObject({ state: 'running', attempt: 2 })
  })

  it('tells the run from its first and last events', () => {
    const started = applyRunEvent(null, {
      type: 'flow-started',
      flowRunId: 'run-1',
      flowId: FLOW,
      resumed: false,
      estimateMicro: 40_000,
      estimateByNode: {},
    })
    const totals = {
      nodes: 3,
      dispatched: 1,
      cached: 0,
      skipped: 1,
      failed: 1,
      canceled: 0,
      estimateMicro: 40_000,
      costMicro: 20_500,
    }
    expect(
      applyRunEvent(started, {
        type: 'flow-finished',
        flowRunId: 'run-1',
        state: 'failed',
        totals,
        outputs: {},
      }),
    ).toEqual({ flowRunId: 'run-1', state: 'failed', estimateMicro: 40_000, totals, outputs: {} })
  })
})
