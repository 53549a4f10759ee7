import { portMapping } from './edits'
import type { CanvasNode, EditorDoc, FileNode } from './types'

/**
 * What a node's result depends on, as a short stable string: its kind and target, its config
 * (without where it sits and what flow output it fills), its inputs' values, and for each
 * connected input the fingerprint of the node feeding it and which output. It follows the
 * executor's cache key (`src-main/executor/validate/cache-key.ts`), which cannot be worked out
 * here: that key hashes the upstream nodes' actual outputs, known only after they ran. Two
 * documents that would make the same node give the same result give the same fingerprint, so an
 * undo back to the settings that made a result makes it current again.
 */
export type NodeFingerprints = ReadonlyMap<string, string>

/** Record fields that place a node on the canvas and change nothing it makes. */
const LAYOUT_FIELDS = new Set(['x', 'y', 'width', 'collapsed', 'label', 'subtitle'])

/**
 * Record fields that are not the node's work: its identity, what the service stamps, and what
 * is counted on its own below (inputs, config) or is not its work at all (outputs' ids).
 */
const NOT_WORK = new Set([
  'id',
  'inputs',
  'outputs',
  'config',
  'created_at',
  'updated_at',
  'flow_id',
  'slug',
  'flow',
])

/**
 * Config keys that wire a node to the flow's ports: what a flow input brings in is counted by its
 * value below, and which flow output a result fills does not change the result.
 */
const WIRING_KEYS = new Set(['flow_inputs', 'flow_outputs'])

/** JSON with sorted keys; media files by content hash alone (their URLs change at every mint). */
function canonical(value: unknown): string {
  if (value === null || value === undefined) return 'null'
  if (typeof value === 'function' || typeof value === 'symbol') return 'null'
  if (typeof value !== 'object') return JSON.stringify(value)
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`
  const record = value as Record<string, unknown>
  if (record.kind === 'media' && typeof record.sha256 === 'string') {
    return `{"media":${JSON.stringify(record.sha256)}}`
  }
  const members = Object.keys(record)
    .filter((key) => record[key] !== undefined)
    .sort()
    .map((key) => `${JSON.stringify(key)}:${canonical(record[key])}`)
  return `{${members.join(',')}}`
}

/**
 * cyrb53: a fast 53-bit string hash. Not for security: it only has to tell settings apart, and
 * keeps a long chain's fingerprints short (a node's includes its upstream's).
 */
function hash(text: string): string {
  let h1 = 0xdeadbeef
  let h2 = 0x41c6ce57
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i)
    h1 = Math.imul(h1 ^ code, 2654435761)
    h2 = Math.imul(h2 ^ code, 1597334677)
  }
  h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507) ^ Math.imul(h2 ^ (h2 >>> 13), 3266489909)
  h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507) ^ Math.imul(h1 ^ (h1 >>> 13), 3266489909)
  return (4294967296 * (2097151 & h2) + (h1 >>> 0)).toString(36)
}

/**
 * The node's own part, without its upstream: kept per record, since a drag makes a new document
 * at every pointer move and leaves every record as it was.
 */
const ownParts = new WeakMap<FileNode, string>()

function ownPart(record: FileNode): string {
  const known = ownParts.get(record)
  if (known !== undefined) return known
  const fields = Object.fromEntries(
    Object.entries(record).filter(([key]) => !LAYOUT_FIELDS.has(key) && !NOT_WORK.has(key)),
  )
  const config = Object.fromEntries(
    Object.entries(record.config ?? {}).filter(([key]) => !WIRING_KEYS.has(key)),
  )
  const inputs = (record.inputs ?? [])
    .map((input) => ({
      name: input.name,
      type: input.variable_type_code,
      value: input.source_output_id ? null : (input.value ?? input.default_value ?? null),
      retry: input.retry_source_output_id ? true : null,
    }))
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
  const part = canonical({ fields, config, inputs })
  ownParts.set(record, part)
  return part
}

const byDoc = new WeakMap<EditorDoc, NodeFingerprints>()

/** Every node's fingerprint in the document, by node id; worked out once per document. */
export function nodeFingerprints(doc: EditorDoc): NodeFingerprints {
  const known = byDoc.get(doc)
  if (known) return known
  const nodes = new Map(doc.nodes.map((node) => [node.id, node]))
  const outputs = new Map<string, { nodeId: string; name: string }>()
  for (const node of doc.nodes) {
    for (const output of node.data.record.outputs ?? []) {
      outputs.set(output.id, { nodeId: node.id, name: output.name })
    }
  }
  const flowInputs = new Map((doc.flow.inputs ?? []).map((input) => [input.name, input]))
  const prints = new Map<string, string>()
  const open = new Set<string>()

  const printOf = (node: CanvasNode): string => {
    const done = prints.get(node.id)
    if (done !== undefined) return done
    // A loop (only retry edges make one, and they are not followed) would never end.
    if (open.has(node.id)) return 'loop'
    open.add(node.id)
    const record = node.data.record
    const upstream: Record<string, unknown> = {}
    for (const input of record.inputs ?? []) {
      if (!input.source_output_id) continue
      const source = outputs.get(input.source_output_id)
      const feeding = source ? nodes.get(source.nodeId) : undefined
      upstream[input.name] =
        source && feeding ? { node: printOf(feeding), output: source.name } : 'missing'
    }
    const fromFlow: Record<string, unknown> = {}
    for (const [port, name] of Object.entries(portMapping(record, 'flow_inputs'))) {
      const input = flowInputs.get(name)
      fromFlow[port] = input
        ? { name, type: input.variable_type_code, value: input.default_value ?? null }
        : 'missing'
    }
    const print = hash(`${ownPart(record)}|${canonical(upstream)}|${canonical(fromFlow)}`)
    open.delete(node.id)
    prints.set(node.id, print)
    return print
  }

  for (const node of doc.nodes) printOf(node)
  byDoc.set(doc, prints)
  return prints
}
