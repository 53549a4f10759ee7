import type { NodeRun, Run } from '../../../src-shared/api'
import type { Handlers } from '../handlers/types'
import type { SandboxServices } from '../services'
import { runNotFound, type RunEngine } from './engine'
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

export function runHandlers(services: SandboxServices, engine: RunEngine): Handlers {
  const fields = {
    runs: services.contract.scalarFields('Run'),
    logs: services.contract.scalarFields('RunLog'),
    nodeRuns: services.contract.scalarFields('NodeRun'),
  }
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

    listRuns: ({ query, auth }) => {
      const page = services.store.list<Partial<StoredRun>>(
        { collection: 'runs', orgId: auth.orgId },
        query,
        { fields: fields.runs },
      )
      return { ...page, items: page.items.map((run) => presentRun(services, run)) }
    },

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
