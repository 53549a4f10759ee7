/**
 * The Runs section's list, read from the mirror (issue 8): what `runs.list` and
 * `runs.filterOptions` answer. It reads the mirror only, so it works offline and never needs a
 * key; the contract is `src-shared/domain/runs-list.ts`.
 *
 * Decisions, and why:
 *
 * - Newest first always, keyset-paged on (created, seq) with opaque cursors tied to their
 *   filters (RUNS_INVALID_CURSOR otherwise), so the thousandth page costs what the first does
 *   and infinite scrolling never skips or repeats a row while a sync adds new ones on top.
 * - Words narrow the list, they do not rank it: the runs' FTS index (prompt and other text
 *   inputs, the same one `src-main/search` reads) gives the matching rows, checked in the same
 *   statement as the filters. Ranked search across runs, evaluations and assets stays with
 *   `search.query`. A pasted run id finds that run.
 * - No schema change: each filter is one a list index of the mirror answers in created order
 *   (status, model, flow, dates); cost and several statuses at once are checked on the rows
 *   walked, which stays cheap unless they match almost nothing in a large mirror.
 * - The count comes with the first page only, capped at RUN_LIST_COUNT_CAP ("more than
 *   10,000"): an exact count of a large mirror would cost more than the page.
 * - Rows carry what a list shows (status, what ran by name, created, duration, cost, a line of
 *   the prompt, whether it made outputs, why it failed), never the whole record.
 */
export { RunsList, type RunsListScope } from './service'
export { RunListError, isRunListError } from './errors'
