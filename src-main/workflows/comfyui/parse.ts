import { WHAT_A_WORKFLOW_IS, WorkflowImportError } from './errors'
import { CORE_WIDGETS, EDITOR_ONLY_NODES, EDITOR_ONLY_WIDGETS } from './widgets'

/** One node of a workflow in ComfyUI's API form: what its engine runs. */
export interface ComfyApiNode {
  class_type: string
  /** Literal values, or `[node id, output index]` for a field fed by another node. */
  inputs: Record<string, unknown>
  _meta?: Record<string, unknown>
}

/** ComfyUI's API form ("Save (API)"): nodes keyed by id. */
export type ComfyApiWorkflow = Record<string, ComfyApiNode>

/** What a file held: the API form always, and the editor form when the file had it. */
export interface ComfyFile {
  workflow: ComfyApiWorkflow
  /** The editor form ("Save"), kept as it was: the layout a person drew. */
  editor: Record<string, unknown> | null
}

type Json = Record<string, unknown>

const isRecord = (value: unknown): value is Json =>
  typeof value === 'object' && value !== null && !Array.isArray(value)

/** A link from another node's output, as the API form writes it. */
export const isLink = (value: unknown): value is [string | number, number] =>
  Array.isArray(value) &&
  value.length === 2 &&
  (typeof value[0] === 'string' || typeof value[0] === 'number') &&
  typeof value[1] === 'number'

export function isApiForm(json: unknown): json is ComfyApiWorkflow {
  if (!isRecord(json)) return false
  const nodes = Object.values(json)
  return (
    nodes.length > 0 &&
    nodes.every(
      (node) => isRecord(node) && typeof node.class_type === 'string' && isRecord(node.inputs),
    )
  )
}

export function isEditorForm(json: unknown): json is Json & { nodes: unknown[] } {
  return (
    isRecord(json) &&
    Array.isArray(json.nodes) &&
    json.nodes.length > 0 &&
    json.nodes.every((node) => isRecord(node) && 'id' in node && typeof node.type === 'string')
  )
}

interface EditorLink {
  from: string
  slot: number
}

/** Link rows by id: `[id, from node, from slot, to node, to slot, type]`, or objects (schema 1). */
function linksOf(json: Json): Map<string, EditorLink> {
  const links = new Map<string, EditorLink>()
  for (const row of Array.isArray(json.links) ? (json.links as unknown[]) : []) {
    if (Array.isArray(row) && row.length >= 3) {
      links.set(String(row[0]), { from: String(row[1]), slot: Number(row[2]) })
    } else if (isRecord(row) && 'origin_id' in row) {
      links.set(String(row.id), { from: String(row.origin_id), slot: Number(row.origin_slot) })
    }
  }
  return links
}

/** ComfyUI's node modes: 2 is "never" (muted), 4 is "bypass"; the engine runs neither. */
const MUTED = 2
const BYPASSED = 4

interface EditorSlot {
  name?: unknown
  type?: unknown
  link?: unknown
  widget?: unknown
}

const slotsOf = (node: Json, key: 'inputs' | 'outputs'): EditorSlot[] =>
  Array.isArray(node[key]) ? (node[key] as unknown[]).filter(isRecord) : []

/** The field names of a node's `widgets_values`, by class; for others, by its widget inputs. */
function widgetNames(node: Json, values: readonly unknown[]): readonly string[] | null {
  const known = CORE_WIDGETS[String(node.type)]
  if (known) return known
  // Newer editors list every widget among the inputs (`widget: {name}`), in widget order.
  const named = slotsOf(node, 'inputs')
    .map((slot) => (isRecord(slot.widget) ? slot.widget.name : undefined))
    .filter((name): name is string => typeof name === 'string')
  return named.length === values.length && named.length > 0 ? named : null
}

/**
 * The editor form as the API form: widget values under their field names, links followed
 * through reroutes and bypassed nodes to `[node id, output index]`, a primitive's value written
 * into the field it feeds. Notes and muted nodes are left out, as ComfyUI leaves them out when it
 * queues a graph. A node whose widgets have no known names keeps them, unnamed, in `_meta`.
 */
export function editorToApi(json: Json & { nodes: unknown[] }): ComfyApiWorkflow {
  const nodes = new Map<string, Json>()
  for (const node of json.nodes) if (isRecord(node)) nodes.set(String(node.id), node)
  const links = linksOf(json)

  type Source = { link: [string, number] } | { value: unknown } | null
  const resolve = (linkId: unknown, seen: Set<string>): Source => {
    if (typeof linkId !== 'number' && typeof linkId !== 'string') return null
    const link = links.get(String(linkId))
    if (!link || seen.has(link.from)) return null
    const from = nodes.get(link.from)
    if (!from) return null
    const type = String(from.type)
    const next = new Set(seen).add(link.from)
    if (type === 'Reroute') return resolve(slotsOf(from, 'inputs')[0]?.link, next)
    if (type === 'PrimitiveNode') {
      const values = Array.isArray(from.widgets_values) ? (from.widgets_values as unknown[]) : []
      return { value: values[0] }
    }
    if (from.mode === MUTED) return null
    if (from.mode === BYPASSED) {
      // A bypassed node hands on its input of the same type as the output asked for.
      const wanted = slotsOf(from, 'outputs')[link.slot]?.type
      const through = slotsOf(from, 'inputs').find((slot) => slot.type === wanted)
      return resolve(through?.link, next)
    }
    return { link: [link.from, link.slot] }
  }

  const api: ComfyApiWorkflow = {}
  for (const [id, node] of nodes) {
    const classType = String(node.type)
    if (EDITOR_ONLY_NODES.has(classType) || node.mode === MUTED || node.mode === BYPASSED) continue
    const inputs: Json = {}
    const meta: Json = {}
    if (typeof node.title === 'string') meta.title = node.title
    const widgets = node.widgets_values
    if (isRecord(widgets)) Object.assign(inputs, widgets)
    else if (Array.isArray(widgets) && widgets.length > 0) {
      const names = widgetNames(node, widgets)
      if (names === null) meta.widgets_values = widgets
      else {
        names.forEach((name, index) => {
          if (!EDITOR_ONLY_WIDGETS.has(name) && index < widgets.length) {
            inputs[name] = widgets[index]
          }
        })
      }
    }
    for (const slot of slotsOf(node, 'inputs')) {
      if (typeof slot.name !== 'string') continue
      // A widget turned into an input keeps its field name in `widget.name`.
      const field =
        isRecord(slot.widget) && typeof slot.widget.name === 'string' ? slot.widget.name : slot.name
      const source = resolve(slot.link, new Set([id]))
      if (source === null) continue
      inputs[field] = 'link' in source ? source.link : source.value
    }
    api[id] = {
      class_type: classType,
      inputs,
      ...(Object.keys(meta).length > 0 ? { _meta: meta } : {}),
    }
  }
  return api
}

/** The workflow a JSON document holds, either form; null when it holds none. */
export function workflowFromJson(json: unknown): ComfyFile | null {
  if (isApiForm(json)) return { workflow: json, editor: null }
  if (isEditorForm(json)) {
    const workflow = editorToApi(json)
    return Object.keys(workflow).length > 0 ? { workflow, editor: json } : null
  }
  return null
}

const notAWorkflow = (fileName: string, why: string) =>
  new WorkflowImportError(
    'NOT_A_WORKFLOW',
    `${fileName} is not a ComfyUI workflow (${why}). Choose ${WHAT_A_WORKFLOW_IS}.`,
  )

/** The workflow in a JSON file, or NOT_A_WORKFLOW saying what was expected. */
export function parseJsonWorkflow(bytes: Uint8Array, fileName: string): ComfyFile {
  let json: unknown
  try {
    json = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(bytes))
  } catch {
    throw notAWorkflow(fileName, 'it is not JSON')
  }
  const found = workflowFromJson(json)
  if (found) return found
  throw notAWorkflow(fileName, 'its JSON has no ComfyUI nodes')
}

/** The workflow in a picture's text: `prompt` (API form) and `workflow` (editor form). */
export function workflowFromText(texts: Readonly<Record<string, string>>): ComfyFile | null {
  const read = (text: string | undefined): unknown => {
    if (text === undefined) return undefined
    try {
      return JSON.parse(text)
    } catch {
      return undefined
    }
  }
  const prompt = read(texts.prompt)
  const editor = read(texts.workflow)
  const fromEditor = workflowFromJson(editor)
  if (isApiForm(prompt)) {
    return { workflow: prompt, editor: isEditorForm(editor) ? editor : null }
  }
  return fromEditor
}

export { notAWorkflow }
