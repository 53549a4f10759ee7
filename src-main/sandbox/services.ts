import type { Accounts } from './accounts'
import type { BlobStore } from './blobs'
import type { Clock } from './clock'
import type { Contract } from './contract'
import type { SandboxDb } from './db'
import type { SandboxEvents } from './events'
import type { Faults } from './faults'
import type { RecordStore } from './store'

export interface SandboxConfig {
  /** Folder of the database and the blob store. */
  dataDir: string
  /** Nominal time a model takes; each model scales it. */
  latencyMs: number
  /** Where the server listens, once it does: presigned URLs point here. */
  baseUrl: string
  /** Signs presigned URLs; a fresh one each start, so old URLs die with the process. */
  urlSigningKey: Buffer
  /** Check every JSON answer against the contract (tests switch this on). */
  checkResponses: boolean
}

/**
 * Everything a handler may use; built once per sandbox. Areas with background work (the run
 * life cycle, callback deliveries, evaluations) add their engines through `SandboxArea.start`.
 */
export interface SandboxServices {
  db: SandboxDb
  store: RecordStore
  accounts: Accounts
  blobs: BlobStore
  contract: Contract
  faults: Faults
  events: SandboxEvents
  clock: Clock
  random: () => number
  config: SandboxConfig
}
