import { SandboxError } from '../errors'
import {
  estimateCost,
  findModel,
  priceRun,
  runModel,
  validateInput,
  type CatalogModel,
  type ModelFile,
  type ModelSuccess,
} from '../models'
import type { SandboxServices } from '../services'
import type { NodeWork, RunTarget, RunWork, TargetHandler } from './types'

/** The catalog's model of a `provider/model` slug a run or a batch names, or a 404 that says where to look. */
export function requireCatalogModel(slug: string): CatalogModel {
  const model = findModel(slug)
  if (!model) {
    throw new SandboxError(
      404,
      'NOT_FOUND',
      `There is no model ${slug}. List the models with GET /v1/models, or look one up with q=slug=provider/model.`,
    )
  }
  return model
}

function modelOf(target: RunTarget): CatalogModel {
  if (target.type !== 'model') throw new Error(`not a model target: ${target.type}`)
  return requireCatalogModel(target.model)
}

/** A stored file: what a presigned URL is minted from when the run is read. */
function storedFile(services: SandboxServices, file: ModelFile): Record<string, unknown> {
  const { sha256, size } = services.blobs.put(file.bytes)
  const entry: Record<string, unknown> = {
    content_type: file.content_type,
    sha256,
    size_bytes: size,
  }
  if (file.width !== undefined) entry.width = file.width
  if (file.height !== undefined) entry.height = file.height
  if (file.duration_ms !== undefined) entry.duration_ms = file.duration_ms
  if (file.frames !== undefined) entry.frames = file.frames
  return entry
}

/**
 * The normalized output, shaped as the catalog examples show it: image outputs as an `images`
 * list, a video as one `video` object, text as `text`; plus the `seed` the run used.
 */
export function normalizedOutput(
  services: SandboxServices,
  model: CatalogModel,
  result: ModelSuccess,
  seed: number,
): Record<string, unknown> {
  const output: Record<string, unknown> = {}
  for (const def of model.outputs) {
    const files = result.files.filter((file) => file.output === def.name)
    if (def.variable_type_code === 'image') {
      output.images = files.map((file) => storedFile(services, file))
    } else if (def.variable_type_code === 'video') {
      const [first] = files
      output.video = first ? storedFile(services, first) : null
    }
  }
  if (result.text !== undefined) output.text = result.text
  output.seed = seed
  return output
}

export interface ModelStepOptions {
  seed: number
  fetchImage: (ref: string) => Promise<Buffer>
  signal: AbortSignal
  random: () => number
}

/** One model run as a node: the run's only node, or one node of a flow or workflow. */
export interface ModelStep {
  /** The normalized output (files stored in the blob store) once the model succeeded. */
  output: Record<string, unknown> | null
  node: Omit<NodeWork, 'flow_node_id' | 'wfengine_node_id'>
  workMs: number
}

/**
 * Runs a catalog model on an input, through its procedural generator: the node's input as
 * validated (defaults applied, with the seed it used), its normalized output and its price.
 * Failures are answered, never thrown; a run stopped meanwhile stores no files.
 */
export async function runModelStep(
  services: SandboxServices,
  model: CatalogModel,
  input: Record<string, unknown>,
  options: ModelStepOptions,
): Promise<ModelStep> {
  const result = await runModel(model.slug, input, {
    seed: options.seed,
    fetchImage: options.fetchImage,
    random: options.random,
  })
  const validated = validateInput(model, input).input
  const seed = typeof validated.seed === 'number' ? validated.seed : options.seed
  const nodeInput = { ...validated, seed }
  const failed = (code: string, stage: string, message: string): ModelStep => ({
    output: null,
    workMs: result.workMs,
    node: {
      input: nodeInput,
      status_code: 'failed',
      output: null,
      cost_micro: 0,
      failure_code: code,
      failure_stage: stage,
      failure_message: message,
      logs: result.logs,
      workMs: result.workMs,
    },
  })
  if (!result.ok) {
    return failed(result.failure_code, result.failure_stage, result.failure_message)
  }
  // Blobs are written only for work that is still wanted; a stopped sandbox may be deleting its folder.
  if (options.signal.aborted) {
    return failed('CANCELED', 'postprocess', 'The run was stopped before its outputs were stored.')
  }
  const output = normalizedOutput(services, model, result, seed)
  const cost = priceRun(model, input, result)
  return {
    output,
    workMs: result.workMs,
    node: {
      input: nodeInput,
      status_code: 'succeeded',
      output,
      cost_micro: cost.micro,
      failure_code: null,
      failure_stage: null,
      failure_message: null,
      logs: result.logs,
      workMs: result.workMs,
    },
  }
}

/** Runs of the catalog's procedural models. */
export function modelTargetHandler(services: SandboxServices): TargetHandler {
  return {
    resolve: (_orgId, target) => {
      const model = modelOf(target)
      return {
        model_id: model.id,
        model_slug: model.slug,
        flow_id: null,
        wfengine_workflow_id: null,
        parentId: model.id,
      }
    },

    estimate: (_orgId, target, input) => estimateCost(modelOf(target), input).micro,

    execute: async (job): Promise<RunWork> => {
      const step = await runModelStep(services, modelOf(job.target), job.input, {
        seed: job.seed,
        fetchImage: job.fetchImage,
        signal: job.signal,
        random: services.random,
      })
      const node = { ...step.node, flow_node_id: null, wfengine_node_id: null }
      if (step.output === null) {
        return {
          ok: false,
          failure_code: node.failure_code ?? 'MODEL_ERROR',
          failure_stage: node.failure_stage ?? 'inference',
          failure_message: node.failure_message ?? 'The model failed.',
          workMs: step.workMs,
          logs: [],
          // A run stopped before its outputs were stored ends canceled: it has no node to show.
          nodes: node.failure_code === 'CANCELED' ? [] : [node],
        }
      }
      return {
        ok: true,
        output: step.output,
        cost_micro: node.cost_micro,
        workMs: step.workMs,
        logs: [],
        nodes: [node],
      }
    },
  }
}
