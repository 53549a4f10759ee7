import { createHash } from 'node:crypto'
import type { FlowNode } from '../../../src-shared/api'
import { isNodeKind, NODE_TARGET_FIELD } from '../../../src-shared/domain/flow'
import type { PortValue } from '../types'
import type { FlowCatalog } from './catalog'

/** Node fields and config keys that place a node on the canvas and change nothing it makes. */
export const LAYOUT_FIELDS = ['x', 'y', 'width', 'collapsed', 'label', 'subtitle'] as const

/**
 * Config keys that wire a node to the flow's inputs and outputs: what they bring in is in the
 * resolved inputs already, and which flow output a result fills does not change the result.
 */
const WIRING_KEYS = ['flow_inputs', 'flow_outputs']

/** Bumped when what goes into a key changes, so that no old key can match a new recipe. */
const RECIPE = 1

/**
 * The version of the built-in nodes' behaviour: bumped when a built-in makes something else
 * from the same inputs, so that cached outputs of the old behaviour are not reused.
 */
export const BUILTINS_VERSION = '1'

/**
 * JSON with the keys of every object sorted, so the same value always reads the same whatever
 * order its keys were set in. Media files (`MediaRef`) are named by their content hash alone:
 * the URL they can be read from changes every time one is minted. Undefined object members are
 * left out and undefined list items written null, as JSON.stringify does.
 */
export function canonicalJson(value: unknown): string {
  const open = new Set<object>()
  const write = (item: unknown): string => {
    if (item === null || item === undefined) return 'null'
    switch (typeof item) {
      case 'string':
      case 'boolean':
        return JSON.stringify(item)
      case 'number':
        return Number.isFinite(item) ? JSON.stringify(item) : 'null'
      case 'object':
        break
      default:
        throw new TypeError(`A ${typeof item} is not a JSON value and cannot be part of a key.`)
    }
    if (open.has(item)) throw new TypeError('A value that contains itself cannot be a key.')
    if ('toJSON' in item && typeof item.toJSON === 'function') {
      return write((item.toJSON as () => unknown)())
    }
    open.add(item)
    let text: string
    if (Array.isArray(item)) {
      text = `[${item.map(write).join(',')}]`
    } else {
      const record = item as Record<string, unknown>
      if (record.kind === 'media' && typeof record.sha256 === 'string') {
        text = `{"kind":"media","sha256":${JSON.stringify(record.sha256)}}`
      } else {
        const members = Object.keys(record)
          .filter((key) => record[key] !== undefined)
          .sort()
          .map((key) => `${JSON.stringify(key)}:${write(record[key])}`)
        text = `{${members.join(',')}}`
      }
    }
    open.delete(item)
    return text
  }
  return write(value)
}

/** What a node runs, by id or code: the half of its target that the node itself names. */
export function targetIdOf(node: FlowNode): string | null {
  return isNodeKind(node.type_code) ? (node[NODE_TARGET_FIELD[node.type_code]] ?? null) : null
}

/**
 * The version of what a node runs, as the catalog knows it now: for a model its version and
 * `updated_at` (a model changed in place gets a new `updated_at`), for a workflow or a sub-flow
 * its version and `updated_at`, for a built-in `BUILTINS_VERSION`. Undefined when the catalog
 * does not know the target.
 */
export function targetVersionOf(node: FlowNode, catalog: FlowCatalog): string | undefined {
  const id = targetIdOf(node)
  if (id === null) return undefined
  switch (node.type_code) {
    case 'model': {
      const model = catalog.model(id)
      return model ? `${model.version ?? ''}@${model.updated_at}` : undefined
    }
    case 'wfengine_workflow': {
      const workflow = catalog.workflow(id)
      return workflow ? `${workflow.version ?? ''}@${workflow.updated_at}` : undefined
    }
    case 'sub_flow': {
      const flow = catalog.flow(id)
      return flow ? `${flow.version}@${flow.updated_at}` : undefined
    }
    case 'builtin':
      return catalog.builtin(id) ? BUILTINS_VERSION : undefined
    default:
      return undefined
  }
}

/**
 * The key a node's outputs are cached under: sha256 (hex) over its kind, its target (id and
 * version), its resolved inputs (media by content hash) and its config without layout and
 * wiring. The node's own id is not part of it, nor where it sits on the canvas: two nodes doing
 * the same work share a key. Lookups go by node, so that costs nothing and saves a dispatch.
 * A node that should make something new each time (a random seed) gets the seed chosen for it
 * in its resolved inputs.
 */
export function nodeCacheKey(
  node: FlowNode,
  resolvedInputs: Readonly<Record<string, PortValue>>,
  targetVersion: string,
): string {
  const config = Object.fromEntries(
    Object.entries(node.config).filter(
      ([key]) => !WIRING_KEYS.includes(key) && !(LAYOUT_FIELDS as readonly string[]).includes(key),
    ),
  )
  const recipe = {
    recipe: RECIPE,
    kind: node.type_code,
    target: { id: targetIdOf(node), version: targetVersion },
    inputs: resolvedInputs,
    config,
  }
  return createHash('sha256').update(canonicalJson(recipe)).digest('hex')
}
