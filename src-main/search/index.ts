/**
 * Offline search over the mirror: what `atelier search` and the search screen (through IPC)
 * call. It reads the mirror only, so it works with the network off and never needs a key.
 *
 * Decisions, and why:
 *
 * - The contract is `src-shared/domain/search.ts`: a zod schema for what may be asked and the
 *   result types, shared with the renderer. Input is checked here, so bad input always fails
 *   the same way: SEARCH_INVALID_QUERY or SEARCH_INVALID_CURSOR, with a message naming the field.
 * - Results are records people know: a run, an evaluation, an asset. A match in a run's log,
 *   in a judge's reasoning or an issue, in a model's name (the runs of that model) or in a
 *   folder's path (the assets in it) returns that record, once, with where it matched and a
 *   snippet of the best match. No schema change: model names lead to runs by their slug.
 * - With words: ranked on a bounded set of the newest matches of each index (`ranked.ts` says
 *   how, and what it can miss), by BM25 computed from their text (`score.ts` says why not
 *   FTS5's), weighted by where the match is, plus a small boost for recent records. Without
 *   words: the filtered list, newest first, keyset-paged (`list.ts`).
 * - Words: every word must match. The last one is also a prefix when it has 3 letters or more
 *   and, matched whole, it finds less than a page (a prefix makes FTS5 read the whole lists of
 *   every word it starts; see `ranked.ts`).
 * - Filters (the schema lists which kind takes which): checked in the same statement as the
 *   match. Each list index answers one filter (with the dates): status or model on runs, status
 *   or verdict on evaluations, folder on assets; two of them are intersected. The others (model
 *   or feedback on evaluations, media type on assets) are checked on rows. A list page whose
 *   filters no single index answers (status with model on runs) reads rows along the narrower
 *   index: cheap unless the combination matches almost nothing in a large mirror.
 * - A folder filter is that folder only, not its subfolders (as the service lists a folder).
 * - Cursors are opaque and tied to their search (words, kinds, filters): see `cursor.ts`.
 * - One organization per search: the caller's. `syncedOrganizations` finds it in the mirror
 *   (the profile's sync cursors), not from the service.
 * - Times are UTC: a day in `from`/`to` is a UTC day, and `to` as a day includes it.
 */
export { MirrorSearch, type MirrorSearchOptions, type SearchScope } from './service'
export { SearchError, isSearchError } from './errors'
export { syncedOrganizations, syncedProfiles, type SyncedOrganization } from './organization'
export { parseSearch, type ParsedSearch } from './query'
