import type { NodeRun, Run } from '../../../src-shared/api'
import type { Handlers } from '../handlers/types'
import type { Page } from '../list'
import type { SandboxServices } from '../services'
import { presentBatch, type Batches, type StoredBatch } from './batches'
import { runNotFound, type RunEngine } from './engine'
import { requireFlow } from './graph-targets'
import { presentNodeRun, presentRun } from './present'
import type { StoredRun } from './types'

const idempotencyKey = (headers: Record<string, string | string[] | undefined>) => {
  const value = headers['idempotency-key']
  return typeof value === 'string' && value !== '' ? value : null
}

/** The run must exist in the organization before its logs or node runs are listed. */
function requireRun(engine: RunEngine, orgId: string, runId: string): void {
  if (!engine.stored(orgId, runId)) throw runNotFound()
}

export function runHandlers(
  services: SandboxServices,
  engine: RunEngine,
  batches: Batches,
): Handlers {
  const fields = {
    runs: services.contract.scalarFields('Run'),
    logs: services.contract.scalarFields('RunLog'),
    nodeRuns: services.contract.scalarFields('NodeRun'),
    batches: services.contract.scalarFields('Batch'),
  }
  const presentPage = (page: Page<Partial<StoredRun>>) => ({
    ...page,
    items: page.items.map((run) => presentRun(services, run)),
  })
  return {
    dispatchModelRun: ({ params, body, headers, auth, status }) => {
      const slug = `${params.provider}/${params.model}`
      const { run, replayed } = engine.dispatch(auth.orgId, {
        target: { type: 'model', model: slug },
        input: body.input,
        callback_url: body.callback_url ?? null,
        callback_secret_id: body.callback_secret_id ?? null,
        metadata: body.metadata ?? null,
        idempotencyKey: idempotencyKey(headers),
        fingerprint: { method: 'POST', path: `/v1/models/${slug}/runs`, body },
        source_code: 'api',
      })
      if (replayed) status(200)
      return run
    },

    listRuns: ({ query, auth }) =>
      presentPage(
        services.store.list<Partial<StoredRun>>({ collection: 'runs', orgId: auth.orgId }, query, {
          fields: fields.runs,
        }),
      ),

    dispatchFlowRun: ({ params, body, headers, auth, status }) => {
      const { run, replayed } = engine.dispatch(auth.orgId, {
        target: { type: 'flow', flow_id: params.flow_id },
        input: body.input,
        callback_url: body.callback_url ?? null,
        callback_secret_id: body.callback_secret_id ?? null,
        metadata: body.metadata ?? null,
        idempotencyKey: idempotencyKey(headers),
        fingerprint: { method: 'POST', path: `/v1/flows/${params.flow_id}/runs`, body },
        source_code: 'api',
      })
      if (replayed) status(200)
      return run
    },

    /** Runs of one flow (their parent), or of every flow with `any`. */
    listFlowRuns: ({ params, query, auth }) => {
      if (params.flow_id !== 'any') requireFlow(services, auth.orgId, params.flow_id)
      return presentPage(
        services.store.list<Partial<StoredRun>>(
          {
            collection: 'runs',
            orgId: auth.orgId,
            parentId: params.flow_id,
            extraWhere: { sql: "json_extract(doc, '$.target_type_code') = ?", args: ['flow'] },
          },
          query,
          { fields: fields.runs },
        ),
      )
    },

    dispatchWorkflowRun: ({ params, body, headers, auth, status }) => {
      const id = params.comfyui_workflow_id
      const { run, replayed } = engine.dispatch(auth.orgId, {
        target: { type: 'wfengine_workflow', wfengine_workflow_id: id },
        input: body.input,
        callback_url: body.callback_url ?? null,
        callback_secret_id: body.callback_secret_id ?? null,
        metadata: body.metadata ?? null,
        idempotencyKey: idempotencyKey(headers),
        fingerprint: { method: 'POST', path: `/v1/comfyui-workflows/${id}/runs`, body },
        source_code: 'api',
      })
      if (replayed) status(200)
      return run
    },

    createBatch: ({ body, headers, auth, status }) => {
      const { batch, replayed } = batches.create(auth.orgId, body, {
        key: idempotencyKey(headers),
        fingerprint: { method: 'POST', path: '/v1/batches', body },
      })
      if (replayed) status(200)
      return batch
    },

    listBatches: ({ query, auth }) => {
      const page = services.store.list<Partial<StoredBatch>>(
        { collection: 'batches', orgId: auth.orgId },
        query,
        { fields: fields.batches },
      )
      return { ...page, items: page.items.map(presentBatch) }
    },

    getBatch: ({ params, auth }) => presentBatch(batches.require(auth.orgId, params.batch_id)),

    cancelBatch: ({ params, auth }) => batches.cancel(auth.orgId, params.batch_id),

    getRun: ({ params, auth }) => engine.get(auth.orgId, params.run_id),

    updateRun: ({ params, body, auth }) =>
      engine.updateMetadata(auth.orgId, params.run_id, body.metadata ?? null),

    listRunLogs: ({ params, query, auth }) => {
      requireRun(engine, auth.orgId, params.run_id)
      return services.store.list(
        { collection: 'run_logs', orgId: auth.orgId, parentId: params.run_id },
        query,
        { fields: fields.logs, defaultSort: 'created_at:asc' },
      )
    },

    listNodeRuns: ({ params, query, auth }) => {
      requireRun(engine, auth.orgId, params.run_id)
      const page = services.store.list<Partial<NodeRun>>(
        { collection: 'node_runs', orgId: auth.orgId, parentId: params.run_id },
        query,
        { fields: fields.nodeRuns, defaultSort: 'created_at:asc' },
      )
      return { ...page, items: page.items.map((nodeRun) => presentNodeRun(services, nodeRun)) }
    },

    cancelRun: ({ params, auth }): Run => engine.cancel(auth.orgId, params.run_id),

    rerunRun: ({ params, body, headers, auth, status }) => {
      const { run, replayed } = engine.rerun(
        auth.orgId,
        params.run_id,
        {
          ...(body?.callback_url === undefined ? {} : { callback_url: body.callback_url }),
          ...(body?.metadata === undefined ? {} : { metadata: body.metadata }),
        },
        {
          key: idempotencyKey(headers),
          fingerprint: {
            method: 'POST',
            path: `/v1/runs/${params.run_id}/rerun`,
            body: body ?? {},
          },
        },
      )
      if (replayed) status(200)
      return run
    },
  }
}
