import { readFile, stat } from 'node:fs/promises'
import { fileURLToPath } from 'node:url'
import type { BatchCreate, FlowNode, RunDispatch } from '../../../src-shared/api'
import type { Intent } from '../../db'
import type { MediaRef, PortValue } from '../types'
import { RemoteNodeError } from './errors'
import type { ModelInfo } from './models'
import { isMediaRef, isRecord } from './values'

/** Where a remote node's runs go. */
export interface RemoteTarget {
  typeCode: 'model' | 'wfengine_workflow'
  /** The model slug (`provider/model`) or the workflow id: the intent's `target_ref`. */
  ref: string
  model: ModelInfo | null
}

/** Items one batch takes (the contract's `maxItems`). */
export const MAX_BATCH_ITEMS = 1000
/** Local media are sent inline as data: URLs up to this size; larger ones belong in the assets. */
export const MAX_INLINE_MEDIA_BYTES = 8 * 1024 * 1024

/** What the request's `metadata` carries, so a run can be told apart and found again. */
export interface IntentMetadata {
  atelier_intent_id: string
  atelier_flow_run_id: string
  atelier_node_id: string
  atelier_attempt: number
}

// No port type of the catalog holds a list today; these are the names one would get.
function isListType(code: string | undefined): boolean {
  if (code === undefined) return false
  const lower = code.toLowerCase()
  return (
    ['list', 'array', 'json', 'object'].includes(lower) ||
    lower.endsWith('_list') ||
    lower.endsWith('[]')
  )
}

/**
 * The inputs fanned out, and into how many items (null: no fan-out, one run).
 *
 * `node.config.fan_out` (a list of input names), when present, says it outright. Otherwise an
 * input fans out when its value is a list and its type — the node port's `variable_type_code`,
 * else the model input's — is not a list type; an input of no known type is sent as it is.
 * Fanned-out lists must have one length; the other inputs are the same for every item.
 */
export function planFanOut(
  node: FlowNode,
  inputs: Record<string, PortValue>,
  target: RemoteTarget,
): { names: string[]; count: number | null } {
  const configured = node.config.fan_out
  let names: string[]
  if (configured !== undefined && configured !== null) {
    if (!Array.isArray(configured) || !configured.every((name) => typeof name === 'string')) {
      throw new RemoteNodeError(
        'FAN_OUT_UNSUPPORTED',
        `The node ${JSON.stringify(node.label)} has a fan_out setting that is not a list of input names. Fix it in the node's settings.`,
      )
    }
    names = configured
    for (const name of names) {
      if (!Array.isArray(inputs[name])) {
        throw new RemoteNodeError(
          'FAN_OUT_UNSUPPORTED',
          `The node ${JSON.stringify(node.label)} fans out its input ${JSON.stringify(name)}, which did not receive a list. Connect a list to it, or take it out of fan_out.`,
        )
      }
    }
  } else {
    const typeOf = (name: string) =>
      node.inputs.find((port) => port.name === name)?.variable_type_code ??
      target.model?.inputs.find((def) => def.name === name)?.variable_type_code
    names = Object.keys(inputs).filter((name) => {
      const type = typeOf(name)
      return Array.isArray(inputs[name]) && type !== undefined && !isListType(type)
    })
  }
  if (names.length === 0) return { names, count: null }
  if (target.typeCode !== 'model') {
    throw new RemoteNodeError(
      'FAN_OUT_UNSUPPORTED',
      `The node ${JSON.stringify(node.label)} receives a list on ${names.map((n) => JSON.stringify(n)).join(', ')}, but only model nodes can fan a list out (through the Batches API). Feed it one value at a time.`,
    )
  }
  const lengths = names.map((name) => (inputs[name] as unknown[]).length)
  const count = lengths[0] ?? 0
  if (lengths.some((length) => length !== count)) {
    throw new RemoteNodeError(
      'FAN_OUT_MISMATCH',
      `The node ${JSON.stringify(node.label)} fans out lists of different lengths (${names.map((name, i) => `${name}: ${String(lengths[i])}`).join(', ')}). Give them the same number of items.`,
    )
  }
  if (count > MAX_BATCH_ITEMS) {
    throw new RemoteNodeError(
      'FAN_OUT_TOO_LARGE',
      `The node ${JSON.stringify(node.label)} fans out ${count} items; one batch takes at most ${MAX_BATCH_ITEMS}. Split the list.`,
    )
  }
  return { names, count }
}

/** The inputs of item `index` of a fan-out. */
export function itemInputs(
  inputs: Record<string, PortValue>,
  names: readonly string[],
  index: number,
): Record<string, PortValue> {
  const item = { ...inputs }
  for (const name of names) item[name] = (inputs[name] as unknown[])[index]
  return item
}

async function inlineLocal(media: MediaRef): Promise<string> {
  const path = media.url.startsWith('file:') ? fileURLToPath(media.url) : media.url
  try {
    const { size } = await stat(path)
    if (size > MAX_INLINE_MEDIA_BYTES) {
      throw new RemoteNodeError(
        'MEDIA_UNREADABLE',
        `The file ${path} is ${Math.ceil(size / 1024 / 1024)} MB, more than the ${MAX_INLINE_MEDIA_BYTES / 1024 / 1024} MB sent inline with a run. Save it to the assets first and use the asset.`,
      )
    }
    const bytes = await readFile(path)
    return `data:${media.content_type};base64,${bytes.toString('base64')}`
  } catch (error) {
    if (error instanceof RemoteNodeError) throw error
    throw new RemoteNodeError(
      'MEDIA_UNREADABLE',
      `The input file ${path} could not be read (${(error as NodeJS.ErrnoException).code ?? 'error'}). Check that it still exists.`,
      { cause: error },
    )
  }
}

/**
 * A port value as the service takes it: media by URL (a presigned or any http(s) URL as it is,
 * a local file inline as a data: URL), everything else as it is.
 */
/** The URL to send for a media ref with an http(s) URL (a fresh one when it expires soon). */
export type UrlFor = (ref: MediaRef) => Promise<string>

const asItIs: UrlFor = (ref) => Promise.resolve(ref.url)

async function serviceValue(value: PortValue, urlFor: UrlFor): Promise<unknown> {
  if (isMediaRef(value)) {
    if (/^data:/i.test(value.url)) return value.url
    return /^https?:/i.test(value.url) ? urlFor(value) : inlineLocal(value)
  }
  if (Array.isArray(value)) return Promise.all(value.map((item) => serviceValue(item, urlFor)))
  if (isRecord(value)) {
    const entries = await Promise.all(
      Object.entries(value).map(
        async ([key, child]) => [key, await serviceValue(child, urlFor)] as const,
      ),
    )
    return Object.fromEntries(entries)
  }
  return value
}

/** The run input: every input with a value (null means "not given" on a port, so it is left out). */
export async function serviceInput(
  inputs: Record<string, PortValue>,
  urlFor: UrlFor = asItIs,
): Promise<Record<string, unknown>> {
  const input: Record<string, unknown> = {}
  for (const [name, value] of Object.entries(inputs)) {
    if (value === undefined || value === null) continue
    input[name] = await serviceValue(value, urlFor)
  }
  return input
}

export function runBody(input: Record<string, unknown>, metadata: IntentMetadata): RunDispatch {
  return { input, metadata: { ...metadata } }
}

/** One item of a fan-out: its place in the node's lists, its inputs and their hash. */
export interface BatchItem {
  index: number
  input: Record<string, unknown>
  inputsHash: string
}

export function batchBody(
  slug: string,
  items: readonly BatchItem[],
  metadata: IntentMetadata,
): BatchCreate {
  return {
    model: slug,
    // A batch has no metadata of its own in the contract: every item's run carries the intent's,
    // with its place in the node's lists and its inputs' hash, so the batch can be found through
    // its runs, and a later fan-out can take back the items that succeeded instead of paying
    // for them again.
    items: items.map((item) => ({
      input: item.input,
      metadata: {
        ...metadata,
        atelier_item: item.index,
        atelier_item_inputs_hash: item.inputsHash,
      },
    })),
  }
}

/** A stored request is a batch when it is the Batches API's body. */
export function isBatchIntent(intent: Intent): boolean {
  return isRecord(intent.request) && Array.isArray(intent.request.items)
}

/** The metadata a stored request carries, as far as it is ours. */
export function metadataOf(intent: Intent): Partial<IntentMetadata> {
  const request = intent.request
  if (!isRecord(request)) return {}
  if (isRecord(request.metadata)) return request.metadata
  const first = Array.isArray(request.items) ? (request.items[0] as unknown) : undefined
  if (isRecord(first) && isRecord(first.metadata)) {
    return first.metadata
  }
  return {}
}
