import type { Migration } from '../../migrate'
import { cacheTables } from './0001-cache-tables'
import { searchIndex } from './0002-search-index'
import { runDetailsFetched } from './0003-run-details-fetched'
import { mirroredRecords } from './0004-mirrored-records'

/**
 * The mirror's schema: a cache of the service that a full sync can always rebuild.
 *
 * One file per step, numbered as its version. Append-only: never edit a step that has shipped
 * (its hash is recorded in every database it reached, and an edited step is refused on open);
 * add a new file and append it here.
 */
export const MIRROR_MIGRATIONS: readonly Migration[] = [
  cacheTables,
  searchIndex,
  runDetailsFetched,
  mirroredRecords,
]
