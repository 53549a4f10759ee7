import { createHash } from 'node:crypto'
import type { FlowNode, Run } from '../../../src-shared/api'
import type { MediaRef, PortValue } from '../types'
import { RemoteNodeError } from './errors'
import type { ModelInfo } from './models'
import { isRecord } from './values'

const SHA256 = /^[0-9a-f]{64}$/
const DOWNLOAD_TIMEOUT_MS = 120_000

/** A file of a run's output: it names its bytes by URL and says what they are. */
function isOutputFile(value: unknown): value is Record<string, unknown> & {
  url: string
  content_type: string
} {
  return isRecord(value) && typeof value.url === 'string' && typeof value.content_type === 'string'
}

/**
 * The sha256 of the bytes behind a URL, streamed. Output URLs are presigned: they carry their
 * own authority, so the API key is never sent along (it could be any host).
 */
async function hashOf(url: string, signal: AbortSignal | undefined): Promise<string> {
  const timeout = AbortSignal.timeout(DOWNLOAD_TIMEOUT_MS)
  const response = await fetch(url, {
    signal: signal ? AbortSignal.any([signal, timeout]) : timeout,
  })
  if (!response.ok || !response.body) {
    await response.body?.cancel()
    throw new Error(`the file's URL answered HTTP ${response.status}`)
  }
  const hash = createHash('sha256')
  for await (const chunk of response.body as AsyncIterable<Uint8Array>) hash.update(chunk)
  return hash.digest('hex')
}

async function toMediaRef(
  file: Record<string, unknown> & { url: string; content_type: string },
  signal: AbortSignal | undefined,
  runId: string | undefined,
): Promise<MediaRef> {
  let sha256 = typeof file.sha256 === 'string' ? file.sha256.toLowerCase() : ''
  if (!SHA256.test(sha256)) {
    try {
      sha256 = await hashOf(file.url, signal)
    } catch (error) {
      throw new RemoteNodeError(
        'MEDIA_UNREADABLE',
        `An output file of the run could not be downloaded to name it by content (${error instanceof Error ? error.message : String(error)}). Run the flow again to retry.`,
        { cause: error },
      )
    }
  }
  const media: MediaRef = { kind: 'media', sha256, content_type: file.content_type, url: file.url }
  if (runId !== undefined) media.run_id = runId
  if (typeof file.width === 'number') media.width = file.width
  if (typeof file.height === 'number') media.height = file.height
  return media
}

/** A value of the run's output as a port value: every file a MediaRef, the rest as it is. */
export async function portValue(
  value: unknown,
  signal?: AbortSignal,
  runId?: string,
): Promise<PortValue> {
  if (isOutputFile(value)) return toMediaRef(value, signal, runId)
  if (Array.isArray(value)) return Promise.all(value.map((item) => portValue(item, signal, runId)))
  if (isRecord(value)) {
    const entries = await Promise.all(
      Object.entries(value).map(async ([key, child]) => [
        key,
        await portValue(child, signal, runId),
      ]),
    )
    return Object.fromEntries(entries) as PortValue
  }
  return value
}

/**
 * Where a port's value is in the run's output. By the port's name first (workflow runs and
 * flows key their output by port name); else by its type, the way the contract normalizes a
 * model's output: an image port takes the first of `images`, a video port `video`, a text or
 * string port `text`. Undefined when the run made nothing for it.
 */
function pick(output: Record<string, unknown>, name: string, type: string): unknown {
  if (output[name] !== undefined) return output[name]
  switch (type) {
    case 'image':
      return Array.isArray(output.images) ? (output.images[0] as unknown) : output.image
    case 'video':
      return output.video
    case 'text':
    case 'string':
      return output.text
    default:
      return undefined
  }
}

/** The ports a node's outputs are named by: its own, else its model's. */
function portsOf(node: FlowNode, model: ModelInfo | null): { name: string; type: string }[] {
  const own = node.outputs.map((port) => ({ name: port.name, type: port.variable_type_code }))
  if (own.length > 0) return own
  return (model?.outputs ?? []).map((def) => ({ name: def.name, type: def.variable_type_code }))
}

/**
 * A run's output by node output name. A node with no known ports gets the output as it came
 * (files as MediaRefs), so nothing the run made is dropped.
 */
export async function nodeOutputs(
  node: FlowNode,
  model: ModelInfo | null,
  run: Pick<Run, 'id' | 'output'> | undefined,
  signal?: AbortSignal,
): Promise<Record<string, PortValue>> {
  const ports = portsOf(node, model)
  const raw = run?.output ?? {}
  if (ports.length === 0)
    return (await portValue(raw, signal, run?.id)) as Record<string, PortValue>
  const outputs: Record<string, PortValue> = {}
  for (const port of ports) {
    const value = pick(raw, port.name, port.type)
    if (value !== undefined) outputs[port.name] = await portValue(value, signal, run?.id)
  }
  return outputs
}
