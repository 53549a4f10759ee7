/**
 * The flow editor's services in the main process: the flows a person can open, saving and
 * versions, checking a flow before a run, the node palette, and runs with live events. One
 * entry, `openFlowEditor`, which the core opens over its own databases, client and event sink.
 * Its interface is `FlowEditor` (`types.ts`), one method per channel, taking the domain's
 * requests (`src-shared/domain/flow-editor.ts`); the IPC layer adapts it to the channels, and a
 * `FlowEditorError` (a `CodedError`) reaches the window as its code and message.
 *
 * Decisions, and why:
 *
 * - Local flows live in the ledger (`local_flows`, `local_flow_versions`): they are this
 *   machine's own work, which a rebuilt mirror must never take along. The row keeps the whole
 *   flow file (its `id` is the flow's) and what the list shows of it (name, description, node
 *   count), so listing reads no flow file. The flow file's `name` is the flow's name: a rename
 *   writes it into the file, a save takes it from the file.
 * - Saving checks the file FORMAT only (`parseFlowDocument`: FLOW_INVALID with every problem):
 *   work in progress with graph problems (a required input not wired yet) must save; those are
 *   `check`'s to report. A save that names `baseUpdatedMs` is refused (CONFLICT) when the flow
 *   was saved after it, in the same SQL statement that writes, so two windows cannot both win.
 *   `updatedMs` grows by at least 1 per write. Service flows and templates never change here
 *   (READ_ONLY); they are copied first.
 * - The list: local flows out of the trash, the mirror's flows, and templates, newest first. A
 *   template is a flow whose `flow_type_code` is `template`, or one a solution of the mirror
 *   links. The service's flow templates (GET /v1/flow-templates) are not walked by the sync and
 *   solutions only name them, so the first list of a session fetches them with their graphs
 *   into the mirror's flows (waiting at most 5 s; offline, again at most once a minute); after
 *   that they open offline. A service flow synced from a list has no nodes yet (its count says
 *   0): opening it fetches its graph into the mirror, as `atelier run` does; offline that is
 *   FLOW_NOT_SYNCED.
 * - Copies (`create` with `from`, `import`) get a new flow id; nodes, ports and edges keep
 *   theirs, so the copy stays wired and its nodes' cache keys are the original's. A copy of a
 *   service flow or template drops what the service recorded of the original (organization,
 *   version, counters, slug); an import keeps the file as it is apart from the id.
 * - Delete moves to the trash (`restore` undoes it); what stayed there 30 days is deleted for
 *   good when Atelier starts. A flow in the trash is not opened, listed, saved or run as a
 *   sub-flow.
 * - Versions are named snapshots numbered from 1 per flow. Restoring one first keeps the
 *   current flow as a version of its own ("Before restoring …"), so a restore is undone by
 *   restoring that one; nothing is ever overwritten.
 * - `check` completes the catalog from the service like a run (offline: the mirror as it is),
 *   then reports every validation problem (and the flow inputs' when values are given), the
 *   estimate per node and in total (the runners' `estimate` on what is known before a run;
 *   null when any price is unknown), and the balance (null when it cannot be read).
 * - The palette: the mirror's models (their details fetched once a session when a sync left
 *   them out; price = the pricing rules on the model's defaults), the built-ins Atelier runs,
 *   the workflow-engine workflows, and local flows as sub-flows (found by the executor through
 *   the editor's catalog, which adds local flows to the mirror's).
 * - Runs: `runFlow` as `atelier run` calls it, with the same runners, ledger, cache and media
 *   store (plus the remote runner for workflow nodes), under an id made here. `start` answers
 *   once nothing can refuse the run any more (problems: FLOW_INVALID; the balance, the
 *   service: RUN_REFUSED); events wait for that answer, then go out in order as
 *   `flowRuns.event`. "Run to here" (`only`) runs those nodes and what they need by edges; the
 *   rest is left out unvalidated. Closing the core cancels every run (remote runs too) and
 *   waits for their records.
 */
export { openFlowEditor, TRASH_KEPT_MS, type FlowEditorOptions } from './editor'
export type { FlowEditor } from './types'
export { FlowEditorError, isFlowEditorError, type FlowEditorErrorCode } from './errors'
export { FLOW_FILE_SUFFIX } from './documents'
export { upTo } from './runs'
