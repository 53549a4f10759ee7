import type { BuiltinNode, Flow, Model, ReferenceRecord, Workflow } from '../../../src-shared/api'
import type { Mirror } from '../../db'
import { BUILTIN_NODES, catalogBuiltins, type CatalogBuiltin } from './builtins'

/**
 * What validation and planning need to know about what nodes run, from wherever it is kept: the
 * mirror (`mirrorCatalog`), a fixed set (`memoryCatalog`, for tests and for flows checked before
 * anything is synced), or the service itself behind the same interface. Lookups are synchronous:
 * validation is pure, so whatever must be fetched is fetched before.
 *
 * "Not known" is not "not there": a model whose inputs and outputs the catalog does not hold
 * comes back without `inputs`/`outputs`, and a flow without its graph without `nodes`; validation
 * then says so (TARGET_DETAILS_UNKNOWN) instead of calling every port unknown.
 */
export interface FlowCatalog {
  /** A model by id, with `inputs`, `outputs` and `pricing` when they are known. */
  model: (id: string) => Model | undefined
  /** A workflow-engine workflow by id, with its inputs and outputs. */
  workflow: (id: string) => Workflow | undefined
  /** A flow by id, with `nodes`, `inputs` and `outputs` when its graph is known. */
  flow: (id: string) => Flow | undefined
  builtin: (code: string) => CatalogBuiltin | undefined
  /** `/v1/catalogs/variable-types`; empty when not known, and then no type code is refused. */
  variableTypes: () => readonly ReferenceRecord[]
  /** `/v1/catalogs/validators`; empty when not known, and then no validator code is refused. */
  validators: () => readonly ReferenceRecord[]
}

export interface MemoryCatalogContents {
  models?: readonly Model[]
  workflows?: readonly Workflow[]
  flows?: readonly Flow[]
  /** Defaults to Atelier's table of the service's built-ins. */
  builtins?: readonly BuiltinNode[]
  variableTypes?: readonly ReferenceRecord[]
  validators?: readonly ReferenceRecord[]
}

const byKey = <T>(items: readonly T[] | undefined, key: (item: T) => string) =>
  new Map((items ?? []).map((item) => [key(item), item]))

export function memoryCatalog(contents: MemoryCatalogContents = {}): FlowCatalog {
  const models = byKey(contents.models, (m) => m.id)
  const workflows = byKey(contents.workflows, (w) => w.id)
  const flows = byKey(contents.flows, (f) => f.id)
  const builtins = byKey(
    contents.builtins ? catalogBuiltins(contents.builtins) : BUILTIN_NODES,
    (b) => b.code,
  )
  const variableTypes = contents.variableTypes ?? []
  const validators = contents.validators ?? []
  return {
    model: (id) => models.get(id),
    workflow: (id) => workflows.get(id),
    flow: (id) => flows.get(id),
    builtin: (code) => builtins.get(code),
    variableTypes: () => variableTypes,
    validators: () => validators,
  }
}

export interface MirrorCatalogOptions {
  /** The service's `/v1/builtin-nodes`, when fetched; else Atelier's table. */
  builtins?: readonly BuiltinNode[]
}

/**
 * The catalog as the mirror holds it for one organization. Models come with the inputs, outputs
 * and pricing rows the mirror keeps apart; a model with neither inputs nor outputs there has not
 * had its details synced (the service leaves them out of list items), so it comes back without
 * them. Reads go to SQLite on each call: the mirror may be synced while a flow is edited.
 */
export function mirrorCatalog(
  mirror: Mirror,
  orgId: string,
  options: MirrorCatalogOptions = {},
): FlowCatalog {
  const scope = { orgId }
  const builtins = byKey(
    options.builtins ? catalogBuiltins(options.builtins) : BUILTIN_NODES,
    (b) => b.code,
  )
  return {
    model: (id) => {
      const model = mirror.models.get(scope, id)
      if (!model || model.deleted_at !== null) return undefined
      const { inputs: _inputs, outputs: _outputs, pricing: _pricing, ...fields } = model
      const inputs = mirror.models.inputs(scope, id)
      const outputs = mirror.models.outputs(scope, id)
      if (inputs.length === 0 && outputs.length === 0) return fields
      return { ...fields, inputs, outputs, pricing: mirror.models.pricing(scope, id) }
    },
    workflow: (id) => {
      const workflow = mirror.workflows.get(scope, id)
      return workflow && workflow.deleted_at === null ? workflow : undefined
    },
    flow: (id) => mirror.flows.get(scope, id) ?? undefined,
    builtin: (code) => builtins.get(code),
    variableTypes: () => mirror.catalogs.list(scope, 'variable-types'),
    validators: () => mirror.catalogs.list(scope, 'validators'),
  }
}
