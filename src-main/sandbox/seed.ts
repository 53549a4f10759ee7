import type { Contract } from './contract'
import {
  EVALUATION_STATUSES,
  EVENT_TYPES,
  reference,
  RUN_LOG_LEVELS,
  RUN_SOURCES,
  RUN_STATUSES,
  RUN_TARGET_TYPES,
  SOLUTION_SECTIONS,
  type ReferenceRecord,
} from './reference-data'
import type { RecordStore } from './store'

/**
 * Global records (visible to every organization) are rewritten at each start from the code, so
 * a newer sandbox never serves an older catalog from a persisted `--data` folder.
 */
export function writeGlobal(
  store: RecordStore,
  collection: string,
  records: readonly { id?: string; code?: string; created_at: string; updated_at: string }[],
  parentOf: (record: never) => string | null = () => null,
): void {
  const statement = store.db.prepare(
    `INSERT OR REPLACE INTO records (collection, id, org_id, parent_id, created_at, updated_at, doc)
     VALUES (?, ?, NULL, ?, ?, ?, ?)`,
  )
  store.transaction(() => {
    store.db.prepare('DELETE FROM records WHERE collection = ? AND org_id IS NULL').run(collection)
    for (const record of records) {
      const id = record.id ?? record.code ?? ''
      statement.run(
        collection,
        id,
        parentOf(record as never),
        record.created_at,
        record.updated_at,
        JSON.stringify(record),
      )
    }
  })
}

export function seedReferenceData(
  store: RecordStore,
  contract: Contract,
  catalogs: Record<string, readonly ReferenceRecord[]>,
): void {
  const schemas = (contract.document.components as { schemas: Record<string, unknown> }).schemas
  const eventTypes = reference(
    EVENT_TYPES.map(([code, name, description, payload]) => [
      code,
      name,
      description,
      { payload_schema: schemas[payload] ?? {} },
    ]),
  )
  const tables: Record<string, readonly ReferenceRecord[]> = {
    'run-target-types': RUN_TARGET_TYPES,
    'run-sources': RUN_SOURCES,
    'run-statuses': RUN_STATUSES,
    'run-log-levels': RUN_LOG_LEVELS,
    'evaluation-statuses': EVALUATION_STATUSES,
    'solution-sections': SOLUTION_SECTIONS,
    'event-types': eventTypes,
    ...catalogs,
  }
  for (const [name, records] of Object.entries(tables)) {
    writeGlobal(store, `catalog:${name}`, records)
  }
}
