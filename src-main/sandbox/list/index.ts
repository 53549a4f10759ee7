/**
 * The sandbox's generic list engine: every list operation of the service (`q`, `limit`,
 * `sort_by`, `fields`, `pq`, `from_prev` → `{items, first, next, previous}`) over the one
 * `records` table.
 *
 * - **Scope**: one collection, live rows only (`deleted_at IS NULL`), the organization's rows plus
 *   the global ones (org_id NULL) when `includeGlobal`, one parent unless `parentId` is omitted or
 *   `'any'`, and an optional handler-specific `extraWhere`. Rows of another organization are never
 *   read.
 * - **q**: the grammar of `resources/openapi.yaml` (see query.ts). Only fields in `options.fields`
 *   may be used. id, org_id, created_at and updated_at are the indexed columns; other fields are
 *   read with `json_extract`. Values compare by type: numbers numerically (booleans as 1/0) when
 *   the stored value is a number and the value numeric (or true/false), otherwise as text, with
 *   date-times (`Z` or any offset) normalised to the records' fixed-width `+00:00` form. `~` is a
 *   Unicode case-insensitive contains (`%` and `_` are literal); `!=` keeps rows where the field
 *   is null; `<`, `>` and friends never match null. When the fields carry their contract types,
 *   a compared value must be one the field can hold (a date-time, a number, true/false, one of an
 *   enum's values, a UUID, text matching the field's pattern), else a 400 that names the clause
 *   and the form (values.ts); ids are matched in either case.
 * - **sort_by**: `field:asc|desc`, default `options.defaultSort ?? 'created_at:desc'`; ties are
 *   broken by id in the same direction, so the order is total. NULL sorts before every value.
 * - **limit**: 1 to 500 (else 422 `VALIDATION_FAILED`), default `options.defaultLimit ?? 50`.
 * - **fields**: a projection; `id` is always kept, other keys keep the record's order.
 * - **Prefer: count=exact** (an assumed extension, see the contract): the page's answer carries
 *   `X-Total-Count`, a `count(*)` over the very WHERE the page is read with (scope, parent, q),
 *   without the cursor's position, in the page's read transaction. Only counted when asked. The
 *   engine finds the request through Fastify's handler tracing channel (total.ts says why), so
 *   every list answers it, whichever handler calls the engine.
 *
 * ## Cursors (keyset pagination, no OFFSET)
 *
 * A cursor is opaque base64url JSON holding the sort, a hash of the query (scope, q and sort; not
 * `fields` or `limit`, which may change between pages) and a *position between two rows*, given
 * by the (sort value, id) of a row, plus the direction it reads in. Because a position is a value,
 * not an offset, rows inserted or deleted elsewhere never shift pages: rows inserted past the
 * position show up on later pages, rows inserted before it are not seen, nothing is read twice.
 * A cursor used with another q, sort or list is a 400 "this cursor belongs to another query"; a
 * malformed one is a 400 too.
 *
 * - `first`: the position before the first row, reading forward. Always a string, even on the
 *   first page or an empty list, so a client can always jump back to the start.
 * - `next`: the position just after the last item, reading forward; null when no row follows.
 * - `previous`: the position just before the first item, reading backward; null when no row
 *   precedes (so always null on the first page).
 * - `pq=<cursor>` reads `limit` rows from the cursor's position in the cursor's own direction, so
 *   `pq=<previous>` alone already goes back a page.
 * - `from_prev=true` reads backward from the position whatever the cursor: `pq=<previous>&
 *   from_prev=true` is the previous page; `pq=<next>&from_prev=true` is the page that ends with
 *   the last item of the page `next` came from (that page again); `pq=<first>&from_prev=true` is
 *   empty. Without `pq`, `from_prev=true` reads backward from the end: the last page.
 * - Items are always returned in the requested order, whichever way the page was read. An empty
 *   page keeps the position it was read from, so its `next`/`previous` (when rows exist on that
 *   side) lead back to the rows.
 */
export {
  DEFAULT_LIMIT,
  DEFAULT_SORT,
  MAX_LIMIT,
  listRecords,
  type ListOptions,
  type ListParams,
  type ListScope,
  type Page,
} from './engine'
export { ListError } from './errors'
export { prefersExactCount } from './total'
export type { ListFields } from './values'
export {
  MAX_ALTERNATIVES,
  MAX_CLAUSES,
  MAX_Q_LENGTH,
  OPERATORS,
  parseQuery,
  type Clause,
  type Operator,
} from './query'
