import type { UploadFile, UploadsRepository } from '../../db'
import type { ServiceClient } from '../../service'
import type { UploadTransferError } from './errors'
import type { PartLimiter } from './limiter'
import type { TransferRetryPolicy } from './retry'

export interface TransferContext {
  service: ServiceClient
  /** The ledger's upload manifests: `openDatabases(home).ledger.uploads`. */
  uploads: UploadsRepository
  /** Shared by every file being uploaded, so the bound on parts in flight holds across files. */
  limiter: PartLimiter
  /** Stops the transfer; parts storage accepted stay recorded, so a later call resumes. */
  signal: AbortSignal
  onProgress?: ((event: TransferEvent) => void) | undefined
  /** For the storage PUTs (never given the API key); the global fetch by default. */
  fetch?: typeof fetch | undefined
  /** Part size to ask the service for on a new upload; the service's default (8 MiB) otherwise. */
  partSize?: number | undefined
  retry?: Partial<TransferRetryPolicy> | undefined
}

export interface TransferFile {
  /** The manifest's row, hashed (sha256 and content type set); re-read from the ledger by seq. */
  row: UploadFile
  /** Absolute path of the file on disk. */
  path: string
  /** The asset folder a new upload goes into; null for the root. */
  folderId: string | null
  /** The name the asset gets. */
  filename: string
  /**
   * The file's bytes, when the caller read them whole to hash them: its parts are sent from
   * memory instead of read again, and what is sent is then what was hashed. Ignored unless its
   * length is the row's size.
   */
  bytes?: Uint8Array | undefined
}

export type TransferState =
  'declaring' | 'resuming' | 'uploading' | 'confirming' | 'done' | 'duplicate' | 'failed'

export type TransferEvent =
  | {
      type: 'state'
      seq: number
      state: TransferState
      /** With done and duplicate. */
      assetId?: string | undefined
      /** With failed. */
      error?: UploadTransferError | undefined
      /** With uploading: the bytes of the parts storage already holds (a resumed upload). */
      bytesDone?: number | undefined
    }
  /** Bytes handed to storage just now; a part sent again counts again. */
  | { type: 'bytes'; seq: number; partNumber: number; bytes: number }
  /** Storage accepted a part and the ledger recorded it. */
  | { type: 'part'; seq: number; partNumber: number; partCount: number; sizeBytes: number }

export interface TransferResult {
  seq: number
  state: 'confirmed' | 'duplicate' | 'skipped'
  assetId: string | null
  /** True when the ledger had the file finished already: nothing was asked or sent. */
  alreadyFinished: boolean
  /** Bytes handed to storage by this call, re-sent parts counted again. */
  bytesSent: number
  /** Parts storage accepted during this call. */
  partsSent: number
}
