import type { LocalFlowContent } from '../db'
import type { CodedIssue } from '../errors/coded'
import { parseFlowDocument, type FlowDocument, type FlowProblem } from '../executor'
import { FlowEditorError } from './errors'

/** How an exported flow file is named: `<slug>.atelier-flow.json`. */
export const FLOW_FILE_SUFFIX = '.atelier-flow.json'

/** Flow problems as the window shows a refused argument's: a path and what to do. */
export function issuesOf(problems: readonly FlowProblem[]): CodedIssue[] {
  return problems.map((problem) => ({ path: problem.path, message: problem.message }))
}

/** The flow file, read as `atelier run` reads it; FLOW_INVALID with every problem otherwise. */
export function readFlow(json: unknown, what: string): FlowDocument {
  const parsed = parseFlowDocument(json)
  if (!parsed.ok) {
    throw new FlowEditorError(
      'FLOW_INVALID',
      `${what} is not a flow file Atelier can read (${String(parsed.problems.length)} problem(s)); fix what the list says.`,
      issuesOf(parsed.problems),
    )
  }
  return parsed.flow
}

/**
 * The same flow under another id. Nodes, ports and edges keep their ids (an edge names its
 * source output by id, so they stay wired); only what names the flow itself follows it.
 */
export function withFlowId(flow: FlowDocument, id: string): FlowDocument {
  return {
    ...flow,
    id,
    nodes: flow.nodes.map((node) => ({ ...node, flow_id: id })),
    inputs: flow.inputs.map((input) => ({ ...input, flow_id: id })),
    outputs: flow.outputs.map((output) => ({ ...output, flow_id: id })),
  }
}

/**
 * A copy made here of any flow (duplicate, start from a template): a new id and name, and none
 * of what the service records about the original (its organization, versions, counters, stars,
 * slug), which would be false of the copy.
 */
export function localCopy(
  flow: FlowDocument,
  id: string,
  name: string,
  nowIso: string,
): FlowDocument {
  const {
    slug: _slug,
    created_by_user: _user,
    recent_stars: _stars,
    ...fields
  } = withFlowId(flow, id)
  return readFlow(
    {
      ...fields,
      name,
      org_id: null,
      flow_type_code: fields.flow_type_code === 'template' ? null : fields.flow_type_code,
      version: 0,
      current_version_id: null,
      run_count: 0,
      avg_duration: null,
      cost_per_run: null,
      featured_at: null,
      created_by: null,
      created_at: nowIso,
      updated_at: nowIso,
    },
    'The copy',
  )
}

/** A new flow with nothing in it yet. */
export function emptyFlow(id: string, name: string, nowIso: string): FlowDocument {
  return readFlow({ id, name, created_at: nowIso, updated_at: nowIso }, 'The new flow')
}

/** What the local flows' table keeps of a flow file besides the file. */
export function contentOf(flow: FlowDocument): LocalFlowContent {
  return {
    name: flow.name,
    description: flow.description,
    nodeCount: flow.nodes.length,
    flow: asJson(flow),
  }
}

export const asJson = (flow: FlowDocument): Record<string, unknown> =>
  flow as unknown as Record<string, unknown>

/** A file name people recognize, safe on every system, from the flow's slug (or name). */
export function fileNameOf(flow: FlowDocument): string {
  const base = (flow.slug || flow.name)
    .normalize('NFKD')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 80)
    .replace(/-+$/, '')
  return `${base === '' ? 'flow' : base}${FLOW_FILE_SUFFIX}`
}

/** The flow file as exported: pretty-printed, ending with a newline. */
export const flowFileText = (flow: FlowDocument): string => `${JSON.stringify(flow, null, 2)}\n`
