import type { Model, ModelRelatedLink } from '../../../src-shared/api'
import { notFound, SandboxError } from '../errors'
import { getOne, listOf, type GenericHandler } from '../handlers/common'
import type { HandlerContext, Handlers, OperationId } from '../handlers/types'
import { MODEL_CATALOG, MODEL_CREATORS, MODEL_FAMILIES } from '../models'
import { writeGlobal } from '../seed'
import type { SandboxArea } from '../handlers/types'
import type { SandboxServices } from '../services'
import type { RecordStore } from '../store'
import { modelStats } from './stats'
import { requireCatalogModel } from './model-target'

/**
 * The embedded lists of a model, each also kept as its own global collection (parent = the model)
 * so that its list operation gets q, sort, paging and `any` from the list engine.
 */
const EMBEDDED = [
  { key: 'inputs', collection: 'model_inputs', schema: 'ModelInput' },
  { key: 'outputs', collection: 'model_outputs', schema: 'ModelOutput' },
  { key: 'examples', collection: 'model_examples', schema: 'ModelExample' },
  { key: 'faq_entries', collection: 'model_faq', schema: 'ModelFaqEntry' },
  { key: 'pricing', collection: 'model_pricing', schema: 'ModelPricing' },
  { key: 'related_links', collection: 'model_related_links', schema: 'ModelRelatedLink' },
] as const

type EmbeddedKey = (typeof EMBEDDED)[number]['key']

/** A model as `/v1/models` lists it: without its embedded lists. */
export function modelSummary(model: Model): Model {
  const {
    inputs: _inputs,
    outputs: _outputs,
    examples: _examples,
    faq_entries: _faq,
    pricing: _pricing,
    related_links: _links,
    ...summary
  } = model
  return summary
}

/**
 * Related links have no `updated_at` in the contract, which `writeGlobal` needs for its column:
 * they are written here with `created_at` in that column and their doc left as the contract has it.
 */
function writeRelatedLinks(store: RecordStore, links: readonly ModelRelatedLink[]): void {
  const insert = store.db.prepare(
    `INSERT OR REPLACE INTO records (collection, id, org_id, parent_id, created_at, updated_at, doc)
     VALUES ('model_related_links', ?, NULL, ?, ?, ?, ?)`,
  )
  store.transaction(() => {
    store.db
      .prepare("DELETE FROM records WHERE collection = 'model_related_links' AND org_id IS NULL")
      .run()
    for (const link of links) {
      insert.run(link.id, link.model_id, link.created_at, link.created_at, JSON.stringify(link))
    }
  })
}

/** Rewrites the model catalog, its creators and families as global records (at every start). */
export function writeModelCatalog(store: RecordStore): void {
  writeGlobal(store, 'models', MODEL_CATALOG.map(modelSummary))
  const byModel = (record: never) => (record as { model_id: string }).model_id
  for (const { key, collection } of EMBEDDED) {
    if (key === 'related_links') {
      writeRelatedLinks(
        store,
        MODEL_CATALOG.flatMap((model) => model.related_links),
      )
    } else {
      const rows: readonly { id: string; created_at: string; updated_at: string }[] =
        MODEL_CATALOG.flatMap(
          (model): readonly { id: string; created_at: string; updated_at: string }[] => model[key],
        )
      writeGlobal(store, collection, rows, byModel)
    }
  }
  writeGlobal(store, 'model_creators', MODEL_CREATORS)
  writeGlobal(store, 'model_families', MODEL_FAMILIES)
}

const MODEL_WHAT = 'The model'

/** The catalog model with this id (org-visible: global or the organization's own), or a 404. */
export function requireModel(store: RecordStore, modelId: string, orgId: string): Model {
  return store.require<Model>('models', modelId, orgId, MODEL_WHAT, { includeGlobal: true })
}

/** A model with its embedded lists, as `GET /v1/models/{model_id}` answers it. */
function readModel(store: RecordStore, modelId: string, orgId: string): Model {
  const model: Record<string, unknown> = { ...requireModel(store, modelId, orgId) }
  for (const { key, collection } of EMBEDDED) model[key] = embedded(store, collection, modelId)
  return model as unknown as Model
}

function embedded(store: RecordStore, collection: string, modelId: string): unknown[] {
  const rows = store.db
    .prepare(
      `SELECT doc FROM records WHERE collection = ? AND parent_id = ? AND org_id IS NULL
         AND deleted_at IS NULL ORDER BY json_extract(doc, '$.sort_order'), id`,
    )
    .all(collection, modelId) as { doc: string }[]
  return rows.map((row) => JSON.parse(row.doc) as unknown)
}

/** A list of one embedded collection, under one model or `any`; an unknown model is a 404. */
function embeddedList(collection: string, schema: string): GenericHandler {
  const list = listOf({
    collection,
    schema,
    includeGlobal: true,
    parentParam: 'model_id',
    defaultSort: 'sort_order:asc',
  })
  return <O extends OperationId>(context: HandlerContext<O>) => {
    const modelId = (context.params as { model_id?: string }).model_id ?? 'any'
    if (modelId !== 'any') {
      const found = context.sandbox.store.get('models', modelId, context.auth.orgId, {
        includeGlobal: true,
      })
      if (!found) throw notFound(MODEL_WHAT)
    }
    return list(context)
  }
}

const listFor = (key: EmbeddedKey): GenericHandler => {
  const spec = EMBEDDED.find((entry) => entry.key === key)
  if (!spec) throw new Error(`no embedded list ${key}`)
  return embeddedList(spec.collection, spec.schema)
}

export const catalogHandlers: Handlers = {
  listModels: listOf({
    collection: 'models',
    schema: 'Model',
    includeGlobal: true,
    defaultSort: 'name:asc',
  }),

  getModel: ({ params, auth, sandbox }) => readModel(sandbox.store, params.model_id, auth.orgId),

  listModelInputs: listFor('inputs'),
  listModelOutputs: listFor('outputs'),
  listModelExamples: listFor('examples'),
  listModelFaqEntries: listFor('faq_entries'),
  listModelPricing: listFor('pricing'),
  listModelRelatedLinks: listFor('related_links'),

  getModelStats: ({ params, auth, sandbox }) => {
    requireModel(sandbox.store, params.model_id, auth.orgId)
    return modelStats(sandbox.db, auth.orgId, params.model_id)
  },

  listModelCreators: listOf({
    collection: 'model_creators',
    schema: 'ModelCreator',
    includeGlobal: true,
    defaultSort: 'name:asc',
  }),
  getModelCreator: getOne({
    collection: 'model_creators',
    idParam: 'id',
    what: 'The model creator',
    includeGlobal: true,
  }),
  listModelFamilies: listOf({
    collection: 'model_families',
    schema: 'ModelFamily',
    includeGlobal: true,
    defaultSort: 'name:asc',
  }),
  getModelFamily: getOne({
    collection: 'model_families',
    idParam: 'id',
    what: 'The model family',
    includeGlobal: true,
  }),
}

/** Where a model is read by the `provider/model` slug a run dispatch takes. */
const SLUG_PATH = '/v1/models/{provider}/{model}'

/**
 * A model read by its slug, found exactly as a dispatch finds it (in either case), and answered
 * as `getModel` answers it: a client that dispatches `POST /v1/models/acme/pixel-fox/runs` can
 * read `GET /v1/models/acme/pixel-fox` without first searching for the id.
 */
function readModelBySlug(store: RecordStore, slug: string, orgId: string): Model {
  return readModel(store, requireCatalogModel(slug).id, orgId)
}

/**
 * Serves {@link SLUG_PATH}. The contract declares only `GET /v1/models/{model_id}` (a UUID; a
 * path parameter cannot hold the slug's slash), so the sandbox answers the slug path as that same
 * operation: its scope, faults and response schema. Should the contract declare the slug path as
 * an operation of its own, that operation gets the handler instead (and no second route is made).
 */
export function modelsBySlug(services: SandboxServices): Pick<SandboxArea, 'handlers' | 'routes'> {
  const declared = services.contract.operations.find(
    (operation) => operation.method === 'GET' && operation.path === SLUG_PATH,
  )
  const read = (params: { provider: string; model: string }, orgId: string) =>
    readModelBySlug(services.store, `${params.provider}/${params.model}`, orgId)
  if (declared) {
    const handler = ({ params, auth }: HandlerContext<OperationId>) =>
      read(params as unknown as { provider: string; model: string }, auth.orgId)
    return { handlers: { [declared.operationId]: handler } }
  }
  const getModel = services.contract.operations.find((op) => op.operationId === 'getModel')
  const segment = { type: 'string', minLength: 1, pattern: '^[^/\\s]+$' }
  return {
    handlers: {},
    routes: (app) => {
      app.get(SLUG_PATH.replace(/{(\w+)}/g, ':$1'), {
        schema: {
          params: {
            type: 'object',
            properties: { provider: segment, model: segment },
            required: ['provider', 'model'],
          },
        },
        config: {
          operationId: 'getModel',
          openapiPath: getModel?.path ?? '/v1/models/{model_id}',
          requiredScope: getModel?.requiredScope,
          successStatus: 200,
        },
        handler: (request) => {
          const auth = request.auth
          if (!auth) throw new SandboxError(401, 'UNAUTHORIZED', 'No credentials were sent.')
          return read(request.params as { provider: string; model: string }, auth.orgId)
        },
      })
    },
  }
}
