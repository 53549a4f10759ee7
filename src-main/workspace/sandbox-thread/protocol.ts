import type { SandboxKeys } from '../../sandbox'

/** What the sandbox's thread is started with. */
export interface SandboxThreadData {
  dataDir: string
  /** 0: a free port. A sandbox started again while in use takes the port it had. */
  port?: number
}

/** The main thread's messages to the sandbox's. */
export type ToSandboxThread = { type: 'close' }

/** The sandbox's thread's messages: once ready (or failed), then once closed. */
export type FromSandboxThread =
  | {
      type: 'ready'
      url: string
      orgId: string
      keys: SandboxKeys
    }
  | { type: 'failed'; message: string; code?: string }
  | { type: 'closed' }
