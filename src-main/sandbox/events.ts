import { EventEmitter } from 'node:events'
import type { components } from '../../src-shared/api'

type Run = components['schemas']['Run']
type Batch = components['schemas']['Batch']

/** What happens inside the sandbox that other parts react to (callbacks, webhooks). */
export interface SandboxEventMap {
  /** A run reached succeeded, failed or canceled; fired once per run. */
  'run.finished': [orgId: string, run: Run]
  /** A batch reached a terminal status; fired once per batch. */
  'batch.finished': [orgId: string, batch: Batch]
}

export class SandboxEvents extends EventEmitter<SandboxEventMap> {}
