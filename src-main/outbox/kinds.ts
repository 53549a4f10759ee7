import type { Asset, AssetFolder, Flow, FlowGraph } from '../../src-shared/api'
import { timeMs, type Mirror } from '../db'
import type { ServiceClient, ServiceError } from '../service'
import { Refusal } from './errors'
import type { OfflineWrite, WriteKind, WriteOf } from './writes'

/** What a kind needs to send one entry; references are already resolved by the replayer. */
export interface SendContext {
  client: ServiceClient
  mirror: Mirror
  orgId: string
  /** Idempotency-Key and X-Organization-Id, the same on every attempt of this entry. */
  headers: Record<string, string>
  signal: AbortSignal | undefined
  /** The service's id for a folder reference (a placeholder resolved through the outbox). */
  folderId: (ref: string) => string
  /** For flow edits: the updated_at the flow must still have; null skips the check. */
  base: string | null
  /** Attempts before this one, stored and within the client: >0 means a reply may have been lost. */
  earlierAttempts: (error?: ServiceError) => number
}

/** A write the service accepted: what to keep in the ledger, and the mirror's new copy. */
export interface Sent {
  result: { id?: string | null; updatedAt?: string | null }
  apply: (mirror: Mirror) => void
}

interface KindSpec<K extends WriteKind> {
  send: (ctx: SendContext, write: WriteOf<K>) => Promise<Sent>
  /**
   * A second look at a refusal that may only mean an earlier attempt already did the work (its
   * answer was lost): the service does not honour Idempotency-Key on these endpoints, so a
   * repeated create meets its own folder (409) and a repeated delete a folder already gone.
   */
  recover?: (ctx: SendContext, write: WriteOf<K>, error: ServiceError) => Promise<Sent | null>
}

type Specs = { [K in WriteKind]: KindSpec<K> }

function init(ctx: SendContext) {
  return { headers: ctx.headers, ...(ctx.signal ? { signal: ctx.signal } : {}) }
}

function folderSent(folder: AssetFolder): Sent {
  return {
    result: { id: folder.id, updatedAt: folder.updated_at },
    // A deleted folder comes back with deleted_at set, which the repository turns into a removal.
    apply: (mirror) => mirror.assetFolders.upsertPage([folder]),
  }
}

/**
 * A flow edit made on top of a version the service no longer has would overwrite someone
 * else's change. The contract has no precondition (If-Match, expected version) on flow writes,
 * so the flow is read first and the edit refused when it moved on: a narrow window remains
 * between that read and the write, which only a precondition on the service could close.
 */
async function checkFlowBase(ctx: SendContext, flowId: string): Promise<void> {
  if (ctx.base === null) return
  const current = await ctx.client.get('/v1/flows/{flow_id}', {
    params: { path: { flow_id: flowId } },
    headers: { 'X-Organization-Id': ctx.orgId },
    ...(ctx.signal ? { signal: ctx.signal } : {}),
  })
  if (timeMs(current.updated_at, 'flow.updated_at') !== timeMs(ctx.base, 'flow base')) {
    throw new Refusal(
      'EDIT_CONFLICT',
      `The flow ${JSON.stringify(current.name)} was changed on the service (at ${current.updated_at}) after this edit was made on the version of ${ctx.base}, so it was not sent: it would have overwritten that change. Open the flow, make the edit again, and discard this one.`,
    )
  }
}

function flowSent(ctx: SendContext, flow: Flow): Sent {
  return {
    result: { id: flow.id, updatedAt: flow.updated_at },
    apply: (mirror) => {
      // PATCH never touches the graph (the contract replaces it with PUT …/graph only), so the
      // graph the mirror holds is still the service's; the answer just does not embed it.
      const before = mirror.flows.get({ orgId: ctx.orgId }, flow.id)
      const record: Flow = { ...flow }
      if (record.nodes === undefined && before?.nodes) record.nodes = before.nodes
      if (record.inputs === undefined && before?.inputs) record.inputs = before.inputs
      if (record.outputs === undefined && before?.outputs) record.outputs = before.outputs
      mirror.flows.upsertPage([record], { orgId: ctx.orgId })
    },
  }
}

function assetSent(asset: Asset): Sent {
  return {
    result: { id: asset.id, updatedAt: asset.updated_at },
    apply: (mirror) => mirror.assets.upsertPage([asset]),
  }
}

function sameName(a: string, b: string): boolean {
  return a.normalize('NFC').toLowerCase() === b.normalize('NFC').toLowerCase()
}

export const KINDS: Specs = {
  'evaluation.feedback': {
    send: async (ctx, write) => {
      const evaluation = await ctx.client.patch('/v1/evaluations/{evaluation_id}/feedback', {
        params: { path: { evaluation_id: write.evaluationId } },
        // The rating is a singleton the call replaces, so sending it twice changes nothing.
        body:
          write.isPositive === null
            ? { is_positive: null }
            : {
                is_positive: write.isPositive,
                ...(write.reason === null ? {} : { reason: write.reason }),
              },
        ...init(ctx),
      })
      return {
        result: { id: evaluation.id, updatedAt: evaluation.updated_at },
        apply: (mirror) => mirror.evaluations.upsertPage([evaluation], { orgId: ctx.orgId }),
      }
    },
  },

  'flow.update': {
    send: async (ctx, write) => {
      await checkFlowBase(ctx, write.flowId)
      const flow = await ctx.client.patch('/v1/flows/{flow_id}', {
        params: { path: { flow_id: write.flowId } },
        body: write.changes,
        ...init(ctx),
      })
      return flowSent(ctx, flow)
    },
  },

  'flow.graph': {
    send: async (ctx, write) => {
      await checkFlowBase(ctx, write.flowId)
      const flow = await ctx.client.put('/v1/flows/{flow_id}/graph', {
        params: { path: { flow_id: write.flowId } },
        // Checked in depth by the service; see writes.ts.
        body: write.graph as unknown as FlowGraph,
        ...init(ctx),
      })
      return flowSent(ctx, flow)
    },
  },

  'folder.create': {
    send: async (ctx, write) => {
      const folder = await ctx.client.post('/v1/asset-folders', {
        body: {
          name: write.name,
          parent_id: write.parentId === null ? null : ctx.folderId(write.parentId),
        },
        ...init(ctx),
      })
      return folderSent(folder)
    },
    recover: async (ctx, write, error) => {
      // Only after an attempt whose answer may have been lost: a clash on a first attempt is a
      // folder someone else made, which the user should hear about rather than have adopted.
      if (error.status !== 409 || ctx.earlierAttempts(error) === 0) return null
      const parentId = write.parentId === null ? null : ctx.folderId(write.parentId)
      const siblings: AssetFolder[] = []
      const listing = ctx.client.list('/v1/asset-folders', {
        params: { query: { q: `parent_id=${parentId ?? 'null'}`, limit: 500 } },
        headers: { 'X-Organization-Id': ctx.orgId },
        ...(ctx.signal ? { signal: ctx.signal } : {}),
      })
      for await (const folder of listing) siblings.push(folder)
      const mine =
        siblings.find((folder) => folder.name === write.name) ??
        siblings.find((folder) => sameName(folder.name, write.name))
      return mine ? folderSent(mine) : null
    },
  },

  'folder.rename': {
    send: async (ctx, write) =>
      folderSent(
        await ctx.client.patch('/v1/asset-folders/{id}', {
          params: { path: { id: ctx.folderId(write.folderId) } },
          body: { name: write.name },
          ...init(ctx),
        }),
      ),
  },

  'folder.move': {
    send: async (ctx, write) =>
      folderSent(
        await ctx.client.patch('/v1/asset-folders/{id}', {
          params: { path: { id: ctx.folderId(write.folderId) } },
          body: { parent_id: write.parentId === null ? null : ctx.folderId(write.parentId) },
          ...init(ctx),
        }),
      ),
  },

  'folder.delete': {
    send: async (ctx, write) =>
      folderSent(
        await ctx.client.delete('/v1/asset-folders/{id}', {
          params: { path: { id: ctx.folderId(write.folderId) } },
          ...init(ctx),
        }),
      ),
    recover: (ctx, write, error) => {
      // Gone after an attempt whose answer was lost: that attempt deleted it.
      if (error.status !== 404 || ctx.earlierAttempts(error) === 0) return Promise.resolve(null)
      const id = ctx.folderId(write.folderId)
      return Promise.resolve({
        result: { id },
        apply: (mirror) => mirror.assetFolders.remove([id]),
      })
    },
  },

  'asset.move': {
    send: async (ctx, write) => {
      const asset = await ctx.client.patch('/v1/assets/{asset_id}', {
        params: { path: { asset_id: write.assetId } },
        body: { folder_id: write.folderId === null ? null : ctx.folderId(write.folderId) },
        ...init(ctx),
      })
      return assetSent(asset)
    },
  },

  'asset.rename': {
    // Sets the name, so a repeat after a lost answer changes nothing.
    send: async (ctx, write) =>
      assetSent(
        await ctx.client.patch('/v1/assets/{asset_id}', {
          params: { path: { asset_id: write.assetId } },
          body: { name: write.name },
          ...init(ctx),
        }),
      ),
  },
}

/** One place that narrows the union, so the replayer calls a kind without casts of its own. */
export function specOf(write: OfflineWrite): KindSpec<WriteKind> {
  return KINDS[write.kind] as unknown as KindSpec<WriteKind>
}
