import type { FlowNode, Model } from '../../src-shared/api'
import type { PaletteItem, PalettePort } from '../../src-shared/domain/flow-editor'
import type { Mirror } from '../db'
import type { FlowDocument, NodeRunner } from '../executor'
import { estimateRunMicro } from '../executor/remote'
import { BUILTIN_NODES } from '../executor/validate'
import type { Logger } from '../log'
import { isServiceError, type ServiceClient } from '../service'

export interface PaletteOptions {
  mirror: Mirror
  client: ServiceClient
  orgId: string
  logger: Logger
  /** The built-in runner, for what a built-in costs (an evaluation is paid, the rest is not). */
  builtinRunner: () => NodeRunner
  /** Local flows, offered as sub-flows. */
  localFlows: () => FlowDocument[]
  /** Aborted when Atelier closes. */
  signal: AbortSignal
}

const PAGE = 500
/** Model details fetched at once, and how long a palette waits for them before answering. */
const DETAIL_FETCHES = 4
const DETAILS_WAIT_MS = 10_000

/** Anything with the port fields the service's models, built-ins, workflows and flows share. */
interface PortLike {
  name: string
  display_name?: string | null
  variable_type_code: string
  is_required?: boolean
  default_value?: unknown
  validator_code?: string | null
  validator_attrs?: Record<string, unknown> | null
  description?: string | null
}

const port = (p: PortLike): PalettePort => ({
  name: p.name,
  displayName: p.display_name ?? null,
  variableType: p.variable_type_code,
  required: p.is_required ?? false,
  defaultValue: p.default_value ?? null,
  validatorCode: p.validator_code ?? null,
  validatorAttrs: p.validator_attrs ?? null,
  description: p.description ?? null,
})

/**
 * What can be put on the canvas. A sync keeps models without their inputs, outputs and pricing
 * (the service's lists leave them out), so the models the mirror has no details of are fetched
 * first (GET /v1/models/{id}, a few at a time, once a session) and written back to the mirror,
 * as the executor's catalog does; offline, they are listed without ports. Prices are the
 * pricing rules applied to no inputs (the model's defaults), as the executor estimates them.
 */
export class Palette {
  private readonly detailsTried = new Set<string>()

  constructor(private readonly options: PaletteOptions) {}

  async items(): Promise<PaletteItem[]> {
    await this.fetchDetails()
    return [...this.models(), ...this.builtins(), ...this.workflows(), ...this.subFlows()]
  }

  private allModels(): Model[] {
    const models: Model[] = []
    for (let after: string | null = null; ;) {
      const page = this.options.mirror.models.list(
        { orgId: this.options.orgId },
        { limit: PAGE, after },
      )
      models.push(...page.items.filter((model) => model.deleted_at === null))
      if (!page.next) return models
      after = page.next
    }
  }

  private hasDetails(id: string): boolean {
    const scope = { orgId: this.options.orgId }
    const { models } = this.options.mirror
    return models.inputs(scope, id).length > 0 || models.outputs(scope, id).length > 0
  }

  private async fetchDetails(): Promise<void> {
    const { client, mirror, orgId } = this.options
    const missing = this.allModels().filter(
      (model) => !this.detailsTried.has(model.id) && !this.hasDetails(model.id),
    )
    const signal = AbortSignal.any([this.options.signal, AbortSignal.timeout(DETAILS_WAIT_MS)])
    let offline = false
    const fetchOne = async (model: Model) => {
      try {
        const detailed = await client.get('/v1/models/{model_id}', {
          params: { path: { model_id: model.id } },
          headers: { 'X-Organization-Id': orgId },
          signal,
        })
        mirror.models.upsertPage([detailed], { orgId })
        this.detailsTried.add(model.id)
      } catch (error) {
        if (isServiceError(error) && error.status >= 400 && error.status < 500) {
          this.detailsTried.add(model.id)
          return
        }
        offline = true
        this.options.logger.info('model details could not be fetched for the palette', {
          err: error,
        })
      }
    }
    const queue = [...missing]
    await Promise.all(
      Array.from({ length: Math.min(DETAIL_FETCHES, queue.length) }, async () => {
        for (let next = queue.shift(); next && !offline; next = queue.shift()) {
          await fetchOne(next)
        }
      }),
    )
  }

  private models(): PaletteItem[] {
    const scope = { orgId: this.options.orgId }
    const { mirror } = this.options
    const types = new Map(
      mirror.catalogs.list(scope, 'model-types').map((type) => [type.code, type.display_name]),
    )
    return this.allModels().map((model): PaletteItem => {
      const inputs = mirror.models.inputs(scope, model.id)
      const outputs = mirror.models.outputs(scope, model.id)
      const pricing = mirror.models.pricing(scope, model.id)
      const category = model.category_code
      return {
        kind: 'model',
        target: model.id,
        name: model.name,
        category: category === null ? 'Models' : (types.get(category) ?? category),
        description: model.description,
        priceMicro:
          pricing.length === 0
            ? null
            : estimateRunMicro({ id: model.id, slug: model.slug, inputs, outputs, pricing }, {}),
        inputs: inputs.map(port),
        outputs: outputs.map(port),
      }
    })
  }

  private builtins(): PaletteItem[] {
    const runner = this.options.builtinRunner()
    return BUILTIN_NODES.map((builtin): PaletteItem => {
      // A node as the palette would put it down: no config yet, so the default job class.
      const node = { type_code: 'builtin', builtin_node_code: builtin.code, config: {} }
      let priceMicro: number | null
      try {
        priceMicro = runner.estimate?.(node as unknown as FlowNode, {}) ?? 0
      } catch {
        priceMicro = null
      }
      return {
        kind: 'builtin',
        target: builtin.code,
        name: builtin.display_name,
        category: 'Built-in',
        description: builtin.description,
        priceMicro,
        inputs: builtin.inputs.map(port),
        outputs: builtin.outputs.map(port),
      }
    })
  }

  private workflows(): PaletteItem[] {
    const items: PaletteItem[] = []
    const scope = { orgId: this.options.orgId }
    for (let after: string | null = null; ;) {
      const page = this.options.mirror.workflows.list(scope, { limit: PAGE, after })
      for (const workflow of page.items) {
        if (workflow.deleted_at !== null) continue
        items.push({
          kind: 'wfengine_workflow',
          target: workflow.id,
          name: workflow.name,
          category: 'Workflows',
          description: workflow.description,
          // Workflows publish no pricing.
          priceMicro: null,
          inputs: workflow.inputs.map(port),
          outputs: workflow.outputs.map(port),
        })
      }
      if (!page.next) return items
      after = page.next
    }
  }

  private subFlows(): PaletteItem[] {
    return this.options.localFlows().map((flow) => ({
      kind: 'sub_flow',
      target: flow.id,
      name: flow.name,
      category: 'Flows',
      description: flow.description,
      priceMicro: null,
      inputs: flow.inputs.map(port),
      outputs: flow.outputs.map(port),
    }))
  }
}
