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
import type { RunTarget, RunWork, TargetHandler } from './types'

function modelOf(target: RunTarget): CatalogModel {
  if (target.type !== 'model') throw new Error(`not a model target: ${target.type}`)
  const model = findModel(target.model)
  if (!model) {
    throw new SandboxError(
      404,
      'NOT_FOUND',
      `There is no model ${target.model}. List the models with GET /v1/models, or look one up with q=slug=provider/model.`,
    )
  }
  return model
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
      const model = modelOf(job.target)
      const result = await runModel(model.slug, job.input, {
        seed: job.seed,
        fetchImage: job.fetchImage,
        random: services.random,
      })
      const nodeInput = { ...validateInput(model, job.input).input, seed: job.seed }
      const node = { flow_node_id: null, wfengine_node_id: null, input: nodeInput }
      if (!result.ok) {
        return {
          ok: false,
          failure_code: result.failure_code,
          failure_stage: result.failure_stage,
          failure_message: result.failure_message,
          workMs: result.workMs,
          logs: [],
          nodes: [
            {
              ...node,
              status_code: 'failed',
              output: null,
              cost_micro: 0,
              failure_code: result.failure_code,
              failure_stage: result.failure_stage,
              failure_message: result.failure_message,
              logs: result.logs,
            },
          ],
        }
      }
      // Blobs are written only for work that is still wanted; a stopped sandbox may be deleting its folder.
      if (job.signal.aborted) {
        return {
          ok: false,
          failure_code: 'CANCELED',
          failure_stage: 'postprocess',
          failure_message: 'The run was stopped before its outputs were stored.',
          workMs: result.workMs,
          logs: [],
          nodes: [],
        }
      }
      const output = normalizedOutput(services, model, result, job.seed)
      const cost = priceRun(model, job.input, result)
      return {
        ok: true,
        output,
        cost_micro: cost.micro,
        workMs: result.workMs,
        logs: [],
        nodes: [
          {
            ...node,
            status_code: 'succeeded',
            output,
            cost_micro: cost.micro,
            failure_code: null,
            failure_stage: null,
            failure_message: null,
            logs: result.logs,
          },
        ],
      }
    },
  }
}
