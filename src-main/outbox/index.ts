/**
 * The outbox: writes made offline (feedback on an evaluation, flow edits, folder changes, an
 * asset moved to another folder) are stored in the ledger and replayed in order when the service
 * answers again. One entry point, `OutboxReplayer`; `atelier outbox`, `atelier feedback` and the
 * app's background scheduler (which calls `replay()` after each sync) all drive it.
 *
 * Decisions, and why:
 *
 * - Typed writes: each kind (writes.ts) has a zod schema, checked when the write is made (bad
 *   input is refused with INVALID_WRITE and never stored) and again when it is read back (an
 *   entry damaged on disk is refused with its reason rather than sent as garbage). An entry of a
 *   kind this version does not know stops the replay instead: it was most likely written by a
 *   newer Atelier, and neither refusing nor skipping it would be right.
 * - The mirror is not written with local changes. It stays a copy of the service that a full
 *   sync can rebuild; what the user changed but the service has not accepted yet lives only in
 *   the ledger, and screens overlay it when they read (`pendingFor(id)`: "feedback pending",
 *   or refused, with the reason). Once the service accepts a write, its answer — the service's
 *   fresh record — goes into the mirror, like a page of a sync.
 * - Order: oldest first, strictly one at a time, per profile and organization. The first write
 *   that cannot be sent now (no network, a timeout, an answer lost, 5xx, 408/429, 401) stays
 *   pending in its place, counts an attempt with its error, and stops the replay (`offline`,
 *   `unauthorized` or `failed`): a later write may depend on it (a rename after a move). A 401
 *   stops rather than refuses because it is about the key, not the write: refusing would mark
 *   every waiting write refused. Other 4xx (403 for a missing scope included) are refusals for
 *   good: the entry is kept as `rejected` with the service's code and message, never dropped,
 *   and the replay goes on with the next one. Retry puts a refused entry back in its old place;
 *   discard forgets one, and only refused ones: a waiting write is never dropped silently.
 * - Idempotency: every request of an entry carries the entry's stored Idempotency-Key (and its
 *   organization as X-Organization-Id), the same on every attempt. The contract honours the key
 *   on run, batch and re-run creation only, so these writes are made safe to repeat in their own
 *   right: feedback, renames, moves and flow PATCHes set a value (repeating them changes
 *   nothing); a repeated folder create meets its own folder (409, names are unique among
 *   siblings), which is adopted when an earlier attempt may have created it; a repeated delete
 *   that finds the folder gone counts as done. A graph replacement repeated after a lost answer
 *   leaves the same graph, one version higher.
 * - Folders created offline get a placeholder id, `local:<uuid>`, that later writes may use (an
 *   asset moved into the new folder, the folder renamed). The service's id is stored with the
 *   create once it is sent, and the placeholder is resolved from it at replay; the waiting
 *   writes about the placeholder move to the real id in the same transaction. A write that
 *   depends on a refused create is refused too, without a request, saying which one.
 * - Flow edits carry the flow's updated_at they were made on (the mirror's copy by default; a
 *   second edit made offline expects what the first one answers). The contract has no
 *   precondition on flow writes, so the replayer reads the flow first and refuses the edit
 *   (EDIT_CONFLICT) when it changed on the service since, instead of overwriting that change.
 * - `replay()` while a replay of the same queue runs (any replayer on the same ledger, profile
 *   and organization) returns the running one: the scheduler and a screen may ask at the same
 *   time, and two loops over one queue would send an entry twice. Two processes
 *   (the app and `atelier`) replaying at once are not kept apart here; the idempotency rules
 *   above keep that harmless for these writes.
 */
export {
  discardRefused,
  OutboxReplayer,
  retryRefused,
  toItem,
  type FeedbackInput,
  type FlowEditOptions,
  type OutboxItem,
  type OutboxReplayerOptions,
  type ReplayedEntry,
  type ReplayReport,
  type ReplayState,
} from './replayer'
export { isOutboxError, OutboxError, type OutboxErrorCode } from './errors'
export { changedByReplay } from './changes'
export {
  describeWrite,
  isPlaceholder,
  PLACEHOLDER_PREFIX,
  WRITE_KINDS,
  writeSchema,
  type FlowChanges,
  type FlowGraphWrite,
  type OfflineWrite,
  type WriteKind,
} from './writes'
