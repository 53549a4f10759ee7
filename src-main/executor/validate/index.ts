import {
  parseFlowDocument as parseFlowFile,
  type FlowFile,
  type FlowParseResult,
  type FlowProblem,
} from '../../../src-shared/domain/flow'
import type { FlowDocument } from '../types'
import { analyzeFlow } from './analyze'
import type { FlowCatalog } from './catalog'

/**
 * Validation and planning of flows: pure code over a flow document and a catalog, no I/O. What
 * is checked, before anything is dispatched, and why it is checked that way:
 *
 * - Every problem at once, each a `FlowProblem` with a stable `code`, a message that says what
 *   to do, the `path` into the document in the service's own form (`nodes.2.inputs.0.value`,
 *   as a 422's `errors[].field`) and the node, input or output to mark on the canvas.
 * - Wiring follows the service's rules: an input is fed by at most one of an edge, a flow input
 *   (`config.flow_inputs`) or a value (else AMBIGUOUS_INPUT; the sandbox lets a value stand in
 *   for a flow input that is not given, the contract's rule does not, so neither does Atelier);
 *   edges form no loop (CYCLE, naming the nodes along one loop per strongly connected group),
 *   retry edges (`retry_source_output_id`) are no edges for that and must come from a gate that
 *   depends on the node they feed (RETRY_NOT_BACKWARD), or a retry could not change a verdict.
 * - Types connect by the rules in `src-shared/domain/flow.ts` (`typeConnection`), shared with
 *   the editor. A list (`T[]`, from a list flow input, a list value or a node that itself
 *   runs per item) reaching a single-value input fans out: allowed on model nodes only, as one
 *   batch; the node's outputs then carry lists, and the plan says which inputs fan out.
 * - Literal values (and defaults) are checked against their type and validators (range,
 *   length, enum, pattern, image_size for media files that carry their size); validator codes
 *   the rules do not know pass, the service checks them.
 * - A target the catalog knows without its details (a model synced from a list, without its
 *   inputs and outputs; a flow without its graph) is TARGET_DETAILS_UNKNOWN rather than a wall
 *   of UNKNOWN_PORTs: sync its details and validate again.
 * - Sub-flows are followed through the catalog: a sub-flow that reaches this flow again, or a
 *   loop among sub-flows, is SUB_FLOW_RECURSION.
 *
 * Planning (`planFlow`) orders the nodes (ties in the flow's order, so plans are stable), says
 * how each input is bound, which inputs fan out, the retry loops with their attempts (the
 * gate's `config.max_attempts`, default 3), the critical path under any duration estimate, and
 * what must re-run after an edit (`downstreamOf`). `nodeCacheKey` names a node's work by
 * content (kind, target and version, inputs with media by sha256, config without layout).
 */

/** Reads a flow file (its text, or the parsed JSON); problems instead of throwing. */
export function parseFlowDocument(json: unknown): FlowParseResult {
  return parseFlowFile(json)
}

/** Every problem of a flow against the catalog; empty when it may run. */
export function validateFlow(flow: FlowDocument, catalog: FlowCatalog): FlowProblem[] {
  return analyzeFlow(flow, catalog).problems
}

// A parsed flow file is what the executor runs: this fails to compile if the two drift apart.
true satisfies FlowFile extends FlowDocument
  ? FlowDocument extends FlowFile
    ? true
    : never
  : never

export {
  FLOW_PROBLEM_CODES,
  listElement,
  listType,
  typeConnection,
  typesConnect,
  type FlowFile,
  type FlowParseResult,
  type FlowProblem,
  type FlowProblemCode,
  type TypeConnection,
} from '../../../src-shared/domain/flow'
export { BUILTIN_NODES, type CatalogBuiltin } from './builtins'
export {
  memoryCatalog,
  mirrorCatalog,
  type FlowCatalog,
  type MemoryCatalogContents,
  type MirrorCatalogOptions,
} from './catalog'
export {
  DEFAULT_MAX_ATTEMPTS,
  MAX_ATTEMPTS_LIMIT,
  type InputBinding,
  type RetrySource,
} from './analyze'
export {
  planFlow,
  type CriticalPath,
  type FlowOutputPlan,
  type FlowPlan,
  type PlanResult,
  type PlannedNode,
  type RetryPlan,
} from './plan'
export {
  BUILTINS_VERSION,
  canonicalJson,
  LAYOUT_FIELDS,
  nodeCacheKey,
  targetIdOf,
  targetVersionOf,
} from './cache-key'
export { checkFlowInputs } from './inputs'
