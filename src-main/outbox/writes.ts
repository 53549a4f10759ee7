import { randomUUID } from 'node:crypto'
import { z } from 'zod'

/**
 * The writes a user can make offline, as they are stored in the outbox: the `kind` column plus
 * a JSON payload, checked with these schemas both when a write is enqueued (bad input never
 * reaches the ledger) and when it is read back for replay (a damaged or foreign entry is refused
 * with a reason instead of sent as garbage).
 */
export const WRITE_KINDS = [
  'evaluation.feedback',
  'flow.update',
  'flow.graph',
  'folder.create',
  'folder.rename',
  'folder.move',
  'folder.delete',
  'asset.move',
  'asset.rename',
] as const
export type WriteKind = (typeof WRITE_KINDS)[number]

export const PLACEHOLDER_PREFIX = 'local:'

const PLACEHOLDER = /^local:[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/

/** A local id for a record created offline, until the service gives it its own. */
export function newPlaceholder(): string {
  return `${PLACEHOLDER_PREFIX}${randomUUID()}`
}

export function isPlaceholder(id: string): boolean {
  return PLACEHOLDER.test(id)
}

// Ids go into request paths, so only characters that need no escaping there are accepted.
const recordId = z
  .string()
  .min(1)
  .max(200)
  .regex(/^[A-Za-z0-9._~-]+$/, 'is not an id of the service')
const placeholder = z.string().regex(PLACEHOLDER, 'is not a local folder id (local:<uuid>)')
/** A folder the service knows, or one created offline that it does not know yet. */
const folderRef = z.union([recordId, placeholder])
const folderName = z
  .string()
  .min(1, 'must not be empty')
  .max(255, 'must be at most 255 characters')
  .regex(/^[^/]+$/, 'must not contain "/"')
/** As the contract's AssetUpdate: a file's name, so "/" is allowed; spaces around it are not. */
const assetName = z
  .string()
  .min(1, 'must not be empty')
  .max(255, 'must be at most 255 characters')
  .refine((name) => name.trim() === name && name !== '', 'must not start or end with spaces')

/**
 * The flow edit's base: the flow's updated_at when the user started the edit (null: no check,
 * the edit wins), or the earlier unsent edit of the same flow it was made on top of (`after`).
 */
const flowBase = {
  flowId: recordId,
  basedOn: z.string().min(1).nullable(),
  after: z.int().positive().nullable(),
}

const flowChanges = z
  .strictObject({
    name: z.string().min(1),
    category_code: z.string(),
    slug: z.string().min(1),
    description: z.string(),
    cover_url: z.string(),
    flow_type_code: z.string(),
    visibility_code: z.string(),
    source_visibility_code: z.string(),
    status_code: z.string(),
    context_variables: z.record(z.string(), z.unknown()),
  })
  .partial()
  .refine((changes) => Object.keys(changes).length > 0, 'must change at least one field')

// The service checks nodes, ports and edges itself; a second copy of those rules here would
// only drift from the contract. What is kept is that the three lists are there.
const graphPart = z.array(z.record(z.string(), z.unknown()))
const flowGraph = z.strictObject({ nodes: graphPart, inputs: graphPart, outputs: graphPart })

export const writeSchema = z.discriminatedUnion('kind', [
  z
    .strictObject({
      kind: z.literal('evaluation.feedback'),
      evaluationId: recordId,
      /** true thumbs-up, false thumbs-down, null clears the rating. */
      isPositive: z.boolean().nullable(),
      reason: z.string().min(1).max(2000, 'must be at most 2000 characters').nullable(),
    })
    .refine((w) => w.isPositive !== null || w.reason === null, {
      message: 'a comment needs a rating: the service drops it when the rating is cleared',
      path: ['reason'],
    }),
  z.strictObject({ kind: z.literal('flow.update'), ...flowBase, changes: flowChanges }),
  z.strictObject({ kind: z.literal('flow.graph'), ...flowBase, graph: flowGraph }),
  z.strictObject({
    kind: z.literal('folder.create'),
    folderId: placeholder,
    name: folderName,
    parentId: folderRef.nullable(),
  }),
  z.strictObject({ kind: z.literal('folder.rename'), folderId: folderRef, name: folderName }),
  z.strictObject({
    kind: z.literal('folder.move'),
    folderId: folderRef,
    parentId: folderRef.nullable(),
  }),
  z.strictObject({ kind: z.literal('folder.delete'), folderId: folderRef }),
  z.strictObject({
    kind: z.literal('asset.move'),
    assetId: recordId,
    folderId: folderRef.nullable(),
  }),
  z.strictObject({ kind: z.literal('asset.rename'), assetId: recordId, name: assetName }),
])

/** One write made offline, of any kind. */
export type OfflineWrite = z.infer<typeof writeSchema>
export type WriteOf<K extends WriteKind> = Extract<OfflineWrite, { kind: K }>
export type FlowChanges = z.infer<typeof flowChanges>
export type FlowGraphWrite = z.infer<typeof flowGraph>

/** What each kind is called where people read it. */
export const KIND_NAMES: Record<WriteKind, string> = {
  'evaluation.feedback': 'feedback',
  'flow.update': 'flow edit',
  'flow.graph': 'flow graph edit',
  'folder.create': 'new folder',
  'folder.rename': 'folder rename',
  'folder.move': 'folder move',
  'folder.delete': 'folder deletion',
  'asset.move': 'asset move',
  'asset.rename': 'asset rename',
}

export function isWriteKind(kind: string): kind is WriteKind {
  return (WRITE_KINDS as readonly string[]).includes(kind)
}

/** The problems of a failed parse, as one sentence that names each field. */
export function describeIssues(error: z.ZodError): string {
  return error.issues
    .map((issue) => {
      const field = issue.path.filter((part) => typeof part !== 'symbol').join('.')
      return field === '' ? issue.message : `${field} ${issue.message}`
    })
    .join('; ')
}

/** The record a write is about, so it can be shown as pending on that record. */
export function subjectOf(write: OfflineWrite): string {
  switch (write.kind) {
    case 'evaluation.feedback':
      return write.evaluationId
    case 'flow.update':
    case 'flow.graph':
      return write.flowId
    case 'folder.create':
    case 'folder.rename':
    case 'folder.move':
    case 'folder.delete':
      return write.folderId
    case 'asset.move':
    case 'asset.rename':
      return write.assetId
  }
}

/** The folders created offline that a write points at (other than the one it creates). */
export function placeholdersOf(write: OfflineWrite): string[] {
  const refs: (string | null)[] = []
  switch (write.kind) {
    case 'folder.create':
      refs.push(write.parentId)
      break
    case 'folder.rename':
    case 'folder.delete':
      refs.push(write.folderId)
      break
    case 'folder.move':
      refs.push(write.folderId, write.parentId)
      break
    case 'asset.move':
      refs.push(write.folderId)
      break
    default:
      break
  }
  return refs.filter((ref): ref is string => ref !== null && isPlaceholder(ref))
}

/** A short line in the user's words, for lists of pending and refused writes. */
export function describeWrite(write: OfflineWrite): string {
  switch (write.kind) {
    case 'evaluation.feedback': {
      const rating =
        write.isPositive === null
          ? 'clear the rating'
          : write.isPositive
            ? 'thumbs-up'
            : 'thumbs-down'
      const note = write.reason === null ? '' : `: ${JSON.stringify(clip(write.reason, 60))}`
      return `${rating} on evaluation ${write.evaluationId}${note}`
    }
    case 'flow.update':
      return `edit flow ${write.flowId} (${Object.keys(write.changes).join(', ')})`
    case 'flow.graph':
      return `replace the graph of flow ${write.flowId} (${write.graph.nodes.length} nodes)`
    case 'folder.create':
      return `create folder ${JSON.stringify(write.name)}${write.parentId === null ? '' : ` in ${write.parentId}`}`
    case 'folder.rename':
      return `rename folder ${write.folderId} to ${JSON.stringify(write.name)}`
    case 'folder.move':
      return `move folder ${write.folderId} to ${write.parentId ?? 'the top level'}`
    case 'folder.delete':
      return `delete folder ${write.folderId}`
    case 'asset.move':
      return `move asset ${write.assetId} to ${write.folderId ?? 'the top level'}`
    case 'asset.rename':
      return `rename asset ${write.assetId} to ${JSON.stringify(write.name)}`
  }
}

function clip(text: string, max: number): string {
  const flat = text.replace(/\s+/g, ' ').trim()
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat
}
