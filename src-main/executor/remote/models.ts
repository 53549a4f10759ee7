import type { Model, ModelInput, ModelOutput, ModelPricing } from '../../../src-shared/api'
import type { Mirror } from '../../db'
import { isServiceError, type ServiceClient } from '../../service'
import { RemoteNodeError } from './errors'

/** What the runner needs of a model: where to send runs, its ports and its pricing rules. */
export interface ModelInfo {
  id: string
  /** `provider/model`, the dispatch path. */
  slug: string
  inputs: readonly ModelInput[]
  outputs: readonly ModelOutput[]
  pricing: readonly ModelPricing[]
}

/** Finds a model by id (or by `provider/model` slug) without waiting: null when not known. */
export type ModelLookup = (ref: string) => ModelInfo | null

const isSlug = (ref: string) => ref.includes('/')

/** A lookup over the mirror's copy of the catalog, as the organization last synced it. */
export function mirrorModels(mirror: Mirror, orgId: string): ModelLookup {
  const scope = { orgId }
  return (ref) => {
    const model = isSlug(ref) ? mirror.models.withSlug(scope, ref) : mirror.models.get(scope, ref)
    if (!model) return null
    return {
      id: model.id,
      slug: model.slug,
      inputs: mirror.models.inputs(scope, model.id),
      outputs: mirror.models.outputs(scope, model.id),
      pricing: mirror.models.pricing(scope, model.id),
    }
  }
}

/** How long the mirror's latest runs of a target took: RemoteRunner's `durations`. */
export function mirrorDurations(mirror: Mirror, orgId: string): (target: string) => number[] {
  return (target) => mirror.runs.recentDurations(orgId, target)
}

/**
 * The models the runner has met: the caller's lookup first (the mirror), then what was fetched
 * from the service, kept for the life of the runner so that `estimate`, which cannot wait,
 * knows every model a run or `loadModels` has touched.
 */
export class ModelCatalog {
  private readonly fetched = new Map<string, ModelInfo>()

  constructor(
    private readonly client: ServiceClient,
    private readonly orgId: string,
    private readonly lookup: ModelLookup | undefined,
  ) {}

  known(ref: string): ModelInfo | null {
    return this.fetched.get(ref) ?? this.lookup?.(ref) ?? null
  }

  async load(ref: string): Promise<ModelInfo> {
    const known = this.known(ref)
    if (known) return known
    const model = await this.fetch(ref)
    this.fetched.set(model.id, model)
    this.fetched.set(model.slug, model)
    return model
  }

  private async fetch(ref: string): Promise<ModelInfo> {
    const headers = { 'X-Organization-Id': this.orgId }
    let model: Model
    try {
      let id = ref
      if (isSlug(ref)) {
        const page = await this.client.get('/v1/models', {
          params: { query: { q: `slug=${JSON.stringify(ref)}`, limit: 1 } },
          headers,
        })
        const found = page.items[0]
        if (!found) throw unknownModel(ref)
        id = found.id
      }
      model = await this.client.get('/v1/models/{model_id}', {
        params: { path: { model_id: id } },
        headers,
      })
    } catch (error) {
      if (isServiceError(error) && error.status === 404) throw unknownModel(ref, error)
      throw error
    }
    const init = {
      params: { path: { model_id: model.id }, query: { limit: 500 } },
      headers,
    }
    // The contract embeds the lists in a single model; a service that leaves them out is asked.
    const [inputs, outputs, pricing] = await Promise.all([
      model.inputs ?? collect(this.client.list('/v1/models/{model_id}/inputs', init)),
      model.outputs ?? collect(this.client.list('/v1/models/{model_id}/outputs', init)),
      model.pricing ?? collect(this.client.list('/v1/models/{model_id}/pricing', init)),
    ])
    return { id: model.id, slug: model.slug, inputs, outputs, pricing }
  }
}

async function collect<T>(items: AsyncIterable<T>): Promise<T[]> {
  const all: T[] = []
  for await (const item of items) all.push(item)
  return all
}

function unknownModel(ref: string, cause?: unknown): RemoteNodeError {
  return new RemoteNodeError(
    'MODEL_UNKNOWN',
    `The node names the model ${ref}, which the service's catalog does not have. Pick another model for the node, or sync the catalog.`,
    { cause },
  )
}
