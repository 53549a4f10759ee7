import { z } from 'zod'
import type { FlowProblem } from './flow'
import type { FlowRunEvent, FlowRunState } from './flow-run'

/**
 * What the flow editor asks the main process, and what it is told back: the flows a person can
 * open (their own, the service's, templates), saving and versions, checking a flow before a run
 * (problems and cost), the node palette, and running. Runtime-free apart from zod.
 *
 * A flow travels as its flow file JSON (`FlowDocument` in the executor, `flowDocumentSchema`):
 * the renderer never builds one the main process could not read back, and the main process
 * reads it on every call with its one flow parser (`readFlow` over `parseFlowDocument`, whose
 * problems come back as FLOW_INVALID with every problem). The contract only checks that a flow
 * is a JSON object and passes it through as it is: parsed once, by the parser that knows flows.
 */

const id = z.string().min(1).max(200)
const name = z.string().trim().min(1, 'A flow needs a name.').max(200)
const isJsonObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' &&
  value !== null &&
  !Array.isArray(value) &&
  [Object.prototype, null].includes(Object.getPrototypeOf(value) as object | null)
/** The flow file as JSON, passed through untouched: the main process's `readFlow` reads it. */
const flowDocument = z.custom<Record<string, unknown>>(isJsonObject, {
  error: 'A flow is the JSON object of a flow file.',
})
const inputs = z.record(z.string(), z.unknown())

/** Where a flow in the list comes from: made here, synced from the service, or a template. */
export type FlowSource = 'local' | 'service' | 'template'

export interface FlowSummary {
  id: string
  name: string
  source: FlowSource
  description: string | null
  nodeCount: number
  updatedMs: number
}

/** A flow opened in the editor. Only `local` flows are saved; the others are copied first. */
export interface StoredFlow extends FlowSummary {
  /** The flow file JSON (`FlowDocument`). */
  flow: Record<string, unknown>
  /** Named versions kept of it, newest first. */
  versions: FlowVersion[]
}

export interface FlowVersion {
  version: number
  name: string
  createdMs: number
}

export interface FlowCheck {
  /** Every problem at once, naming node and input, as the executor would refuse the run. */
  problems: FlowProblem[]
  /** Micro-credits, when every node's price is known. */
  estimate: { totalMicro: number; byNode: Record<string, number> } | null
  /** Nodes a run would take from the cache, at no cost (0 when none, or not known). */
  cachedNodes?: number
  /** Micro-credits on the account; null when the service cannot be reached. */
  balanceMicro: number | null
}

/** One entry of the node palette. */
export interface PaletteItem {
  /** `model`, `builtin`, `wfengine_workflow` or `sub_flow`, as a node's type_code. */
  kind: 'model' | 'builtin' | 'wfengine_workflow' | 'sub_flow'
  /** What the node runs: model id, built-in code, workflow id or flow id. */
  target: string
  name: string
  /** For grouping: the model's category, "Built-in", "Workflows" or "Flows". */
  category: string
  description: string | null
  /** Micro-credits per run when the catalog's pricing gives one without inputs; null otherwise. */
  priceMicro: number | null
  inputs: PalettePort[]
  outputs: PalettePort[]
}

export interface PalettePort {
  name: string
  displayName: string | null
  variableType: string
  required: boolean
  defaultValue: unknown
  validatorCode: string | null
  validatorAttrs: Record<string, unknown> | null
  description: string | null
}

export const flowEditorSchemas = {
  id: z.strictObject({ id }),
  create: z.strictObject({
    name,
    /** Copy this flow (any source) instead of starting empty: duplicate, or use a template. */
    from: id.optional(),
  }),
  save: z.strictObject({
    id,
    flow: flowDocument,
    /** The `updatedMs` the editor started from: a newer save elsewhere is refused (CONFLICT). */
    baseUpdatedMs: z.number().int().nonnegative().optional(),
  }),
  rename: z.strictObject({ id, name }),
  import: z.strictObject({
    /** The flow file's text, at most 20 MB. */
    json: z
      .string()
      .min(2)
      .max(20 * 1024 * 1024),
  }),
  saveVersion: z.strictObject({ id, name }),
  restoreVersion: z.strictObject({ id, version: z.number().int().positive() }),
  check: z.strictObject({ flow: flowDocument, inputs: inputs.optional() }),
  run: z.strictObject({
    flow: flowDocument,
    inputs: inputs.default({}),
    /** Node ids to run again even when cached, with what depends on them. */
    force: z.array(id).max(10_000).default([]),
    /** "Run to here": only these nodes and what they need. */
    only: z.array(id).max(10_000).optional(),
    concurrency: z.number().int().min(1).max(64).optional(),
  }),
  flowRun: z.strictObject({ flowRunId: id }),
  /** An interrupted flow run of this flow, run again under its own id. */
  resume: z.strictObject({ flow: flowDocument, flowRunId: id }),
  preview: z.strictObject({
    sha256: z.string().regex(/^[0-9a-fA-F]{64}$/, 'A sha256 is 64 hex digits.'),
    /** Where the bytes can be fetched if this machine does not have them yet. */
    url: z
      .url({ protocol: /^https?$/, error: 'Only http and https addresses can be fetched.' })
      .max(8192)
      .optional(),
    size: z.number().int().min(32).max(1024).optional(),
  }),
}

/** What the flow editor's services take: each channel's arguments, as its schema makes them. */
export type FlowRef = z.output<typeof flowEditorSchemas.id>
export type FlowCreate = z.output<typeof flowEditorSchemas.create>
export type FlowSave = z.output<typeof flowEditorSchemas.save>
export type FlowRename = z.output<typeof flowEditorSchemas.rename>
export type FlowImport = z.output<typeof flowEditorSchemas.import>
export type FlowVersionSave = z.output<typeof flowEditorSchemas.saveVersion>
export type FlowVersionRef = z.output<typeof flowEditorSchemas.restoreVersion>
export type FlowCheckRequest = z.output<typeof flowEditorSchemas.check>
export type FlowRunRequest = z.output<typeof flowEditorSchemas.run>
export type FlowRunRef = z.output<typeof flowEditorSchemas.flowRun>
export type FlowRunResumeRequest = z.output<typeof flowEditorSchemas.resume>
export type MediaPreviewRequest = z.output<typeof flowEditorSchemas.preview>

/** A small picture of an image output or asset, as a data URL the window's CSP allows. */
export interface MediaPreview {
  sha256: string
  dataUrl: string
}

/** The flow run started by `runs.start`: its events follow as `flowRun.event`. */
export interface StartedRun {
  flowRunId: string
}

/** Pushed for every event of a flow run started from the editor. */
export interface FlowRunEventMessage {
  flowRunId: string
  event: FlowRunEvent
}

/**
 * Node failures that mean the service could not be reached, not that the work failed: a flow
 * run that ended with one can be resumed (the editor's Resume, the flow's run history).
 */
export const INTERRUPTED_CODES: ReadonlySet<string> = new Set([
  'SERVICE_UNREACHABLE',
  'OUTCOME_UNKNOWN',
])

/** One of the flow's runs on this computer, as its run history lists it (`flows.runs`). */
export interface FlowRunSummary {
  flowRunId: string
  state: FlowRunState
  startedMs: number
  /** Null while it runs, and for a run Atelier stopped in the middle of (it closed or crashed). */
  endedMs: number | null
  /** What it was charged so far, in micro-credits. */
  costMicro: number
  /** Its nodes (a sub-flow counts as one) by how they ended, each node's last attempt. */
  done: number
  cached: number
  failed: number
  /**
   * Interrupted and can be resumed: it failed only for a lost connection, or it is still marked
   * running though nothing runs it (Atelier closed in the middle).
   */
  resumable: boolean
  /** The first run it made on the service, for its run page; null when it made none. */
  firstRemoteRunId: string | null
}
