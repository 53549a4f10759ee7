/**
 * The remote node runners: model nodes (and workflow-engine nodes) run on the service, with the
 * ledger's guarantee that paid work is never done twice.
 *
 * Decisions, and why:
 *
 * - One intent per node run, committed before any request: flow run, node, target (model slug or
 *   workflow id), inputs hash (sha256 of the canonical JSON of the resolved inputs, media named
 *   by sha256 so fresh presigned URLs do not make old work look new), a fresh idempotency key and
 *   the exact request body. The body's `metadata` carries `atelier_intent_id`,
 *   `atelier_flow_run_id`, `atelier_node_id` and `atelier_attempt`; a batch has no metadata in
 *   the contract, so each item carries it (with `atelier_item`, its place).
 * - States: prepared → sending (committed before the request leaves) → dispatched (the remote
 *   run or batch id recorded) → succeeded | failed | canceled; abandoned when canceled before it
 *   was sent. A `prepared` intent was never sent; a `sending` one may have been: it is looked up
 *   (runs by `q=idempotency_key=…`; a batch through its item runs' metadata, since a batch has
 *   neither key nor metadata) before anything is sent, and only ever re-sent with its own key
 *   and stored bytes, which the service answers with the run it already made.
 * - An ambiguous failure (`outcomeUnknown`, 5xx, resets) leads to the same look-up-then-resend,
 *   for up to three rounds (the client retries inside each); after that the node fails with
 *   OUTCOME_UNKNOWN and the intent stays `sending` for the next resume. Definite refusals end the
 *   intent as failed: 402 → INSUFFICIENT_CREDIT, other 4xx → DISPATCH_REFUSED.
 * - `run(context)` first looks for the node run's own intent (same flow run, node, attempt,
 *   target and inputs; not failed or canceled): an open one is re-attached to, a succeeded one
 *   is read back instead of paying again. So after a crash the scheduler just runs the flow run
 *   again under the same id; `resumeFlowRun(flowRunId)` (or `reattach(intent)`) follows every
 *   open intent to its end on its own, for `atelier run --resume` and the app's restart.
 * - Following: `GET /v1/runs/{id}`, timed by how long the target's runs took lately (the median
 *   of the last 16 seen here, seeded from the mirror's history): the first poll when the run is
 *   due (at least every second for progress), then every 2% of its expected time, backing off
 *   while it stays late; with nothing known, backoff from 100 ms growing by half to 5 s (`poll`).
 *   Polling blind lets a run sit finished for up to half its time again; timed, a few percent.
 *   It tells `progress` on every change and the new log lines (`q=created_at>=<newest seen>`, ids
 *   already told dropped) when the status or progress moved, every 2 s, and at the end. A batch tells one `remote-run` per item, progress as items
 *   finish and each item's log lines once it has finished. Polls that keep failing give up with
 *   SERVICE_UNREACHABLE; the run goes on and the intent stays `dispatched`.
 * - Outputs by node output name: by the port's name in the run's output first (workflow runs),
 *   else by type from the contract's normalized output (image: first of `images`; video:
 *   `video`; text/string: `text`). Files become MediaRefs with the service's sha256 (downloaded
 *   and hashed when it sent none). A fan-out's outputs are lists in item order.
 * - Fan-out: `node.config.fan_out` (input names) when set; otherwise any list value on an input
 *   whose type (node port, else model input) is not a list type. One Batches API request for all
 *   items, never one run per item; only model nodes fan out (workflows have no batches).
 * - Cancel (the signal): the dispatch request itself is never aborted half-way (its answer
 *   names the run to cancel); then `POST …/cancel` on the run or batch, the intent ends as the
 *   remote run really ended, and the node throws CANCELED.
 * - `estimate`: the pricing rules of the model (see `pricing.ts` for the forms understood), per
 *   run, summed over fanned-out items; models come from `models` (the mirror, `mirrorModels`) or
 *   what the runner fetched (`loadModels`). Workflows publish no pricing: 0.
 * - Media inputs go as URLs: presigned/http(s)/data: as they are, local files inline as data:
 *   URLs up to 8 MB (the stored body must be resendable byte for byte, so nothing is uploaded
 *   on the side). A presigned input URL can expire before a resend; the service then fails the
 *   run with its own message.
 */
export {
  RemoteRunner,
  type DispatchPoint,
  type ReattachResult,
  type RemoteRunnerOptions,
} from './runner'
export { RemoteNodeError, isRemoteNodeError, type RemoteErrorCode } from './errors'
export { DEFAULT_POLL, type PollPolicy } from './follow'
export { mirrorDurations, mirrorModels, type ModelInfo, type ModelLookup } from './models'
export { nextPollWait, RunDurations, type PollTiming } from './poll-timing'
export { FRESH_FOR_MS, presignedExpiryMs } from './fresh-urls'
export { estimateRunMicro } from './pricing'
export { portValue } from './outputs'
export { canonicalJson, inputsHash } from './values'
export { MAX_BATCH_ITEMS, MAX_INLINE_MEDIA_BYTES } from './request'
