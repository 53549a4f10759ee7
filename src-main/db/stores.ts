import type Database from 'better-sqlite3'
import type { Tombstone, TombstoneCollection } from '../../src-shared/api'
import { closeNoted } from './connection'
import { AssetFoldersRepository, AssetsRepository } from './repositories/assets'
import {
  CatalogRecordsRepository,
  flowsRepository,
  ModelsRepository,
  solutionsRepository,
  workflowsRepository,
} from './repositories/catalog'
import { EvaluationsRepository } from './repositories/evaluations'
import { FlowRunsRepository } from './repositories/flow-runs'
import { IntentsRepository } from './repositories/intents'
import { LocalFlowsRepository } from './repositories/local-flows'
import { OutboxRepository } from './repositories/outbox'
import { MirroredRecordsRepository } from './repositories/records'
import {
  CallbackDeliveriesRepository,
  NodeRunsRepository,
  RunLogsRepository,
} from './repositories/run-details'
import { RunDetailsFetchedRepository } from './repositories/run-details-fetched'
import { RunsRepository } from './repositories/runs'
import { SearchIndex } from './repositories/search'
import { SyncCursorsRepository } from './repositories/sync-cursors'
import { UploadsRepository } from './repositories/uploads'

export type Clock = () => number

/** Both stores share this: the connection, its file, and a transaction around any work. */
abstract class Store {
  constructor(
    readonly db: Database.Database,
    readonly file: string,
  ) {}

  /**
   * Runs `work` in one transaction. Repository writes inside it join it (as savepoints), so a
   * page and the cursor that follows it commit together or not at all.
   */
  transaction<T>(work: () => T): T {
    return this.db.transaction(work).immediate()
  }

  get open(): boolean {
    return this.db.open
  }

  close(): void {
    if (this.db.open) {
      // Lets SQLite keep its planner statistics fresh, as its docs advise before closing.
      this.db.pragma('optimize')
      closeNoted(this.db, this.file)
    }
  }
}

/** The cache of the service: every table here can be refilled by a full sync. */
export class Mirror extends Store {
  readonly runs: RunsRepository
  readonly nodeRuns: NodeRunsRepository
  readonly runLogs: RunLogsRepository
  readonly callbackDeliveries: CallbackDeliveriesRepository
  readonly runDetailsFetched: RunDetailsFetchedRepository
  readonly evaluations: EvaluationsRepository
  readonly assets: AssetsRepository
  readonly assetFolders: AssetFoldersRepository
  readonly models: ModelsRepository
  readonly flows: ReturnType<typeof flowsRepository>
  readonly workflows: ReturnType<typeof workflowsRepository>
  readonly solutions: ReturnType<typeof solutionsRepository>
  readonly catalogs: CatalogRecordsRepository
  readonly syncCursors: SyncCursorsRepository
  readonly search: SearchIndex
  /** Every collection registered with `mirrored()` (`sync/collections.ts`), in one table. */
  readonly records: MirroredRecordsRepository
  /** The collections with a table of their own; every other one is in `records`. */
  private readonly removers: Partial<
    Record<TombstoneCollection, (ids: readonly string[]) => number>
  >
  private readonly removeAll: (tombstones: readonly Tombstone[]) => number

  constructor(db: Database.Database, file: string, clock: Clock = Date.now) {
    super(db, file)
    this.runs = new RunsRepository(db)
    this.nodeRuns = new NodeRunsRepository(db)
    this.runLogs = new RunLogsRepository(db)
    this.callbackDeliveries = new CallbackDeliveriesRepository(db)
    this.runDetailsFetched = new RunDetailsFetchedRepository(db, clock)
    this.evaluations = new EvaluationsRepository(db)
    this.assets = new AssetsRepository(db)
    this.assetFolders = new AssetFoldersRepository(db)
    this.models = new ModelsRepository(db)
    this.flows = flowsRepository(db)
    this.workflows = workflowsRepository(db)
    this.solutions = solutionsRepository(db)
    this.catalogs = new CatalogRecordsRepository(db)
    this.syncCursors = new SyncCursorsRepository(db, clock)
    this.search = new SearchIndex(db)
    this.records = new MirroredRecordsRepository(db)
    this.removers = {
      runs: (ids) => this.runs.remove(ids),
      assets: (ids) => this.assets.remove(ids),
      asset_folders: (ids) => this.assetFolders.remove(ids),
      evaluations: (ids) => this.evaluations.remove(ids),
      flows: (ids) => this.flows.remove(ids),
      wfengine_workflows: (ids) => this.workflows.remove(ids),
    }
    this.removeAll = db.transaction((tombstones: readonly Tombstone[]) => {
      const byCollection = new Map<TombstoneCollection, string[]>()
      for (const t of tombstones) {
        const ids = byCollection.get(t.collection) ?? []
        ids.push(t.record_id)
        byCollection.set(t.collection, ids)
      }
      let removed = 0
      for (const [collection, ids] of byCollection) removed += this.applyTombstones(collection, ids)
      return removed
    })
  }

  /**
   * Deletes what the service reported deleted. Ids are global, so a deletion leaves every
   * organization's view; children go by cascade and the search index by trigger. A
   * tombstone's type names the collection as the sync does, so one of a collection registered
   * with `mirrored()` finds its records there; one of a collection not mirrored finds nothing.
   */
  applyTombstones(collection: TombstoneCollection, ids: readonly string[]): number {
    const remover = this.removers[collection]
    return remover ? remover(ids) : this.records.remove(collection, ids)
  }

  /** A page of /v1/tombstones, in one transaction. */
  applyTombstonePage(tombstones: readonly Tombstone[]): number {
    return this.removeAll(tombstones)
  }
}

/** What only this machine knows. Written with synchronous=FULL; never dropped to make room. */
export class Ledger extends Store {
  readonly outbox: OutboxRepository
  readonly intents: IntentsRepository
  readonly uploads: UploadsRepository
  readonly flowRuns: FlowRunsRepository
  readonly localFlows: LocalFlowsRepository

  constructor(db: Database.Database, file: string, clock: Clock = Date.now) {
    super(db, file)
    this.outbox = new OutboxRepository(db, clock)
    this.intents = new IntentsRepository(db, clock)
    this.uploads = new UploadsRepository(db, clock)
    this.flowRuns = new FlowRunsRepository(db, clock)
    this.localFlows = new LocalFlowsRepository(db, clock)
  }
}
