import { Worker } from 'node:worker_threads'
import type { SyncStatus } from '../../src-shared/domain/sync'
// The leaf, not the ipc index: the index brings the channels' zod contract, which this side (the
// Electron main thread, the browser mode's HTTP thread) never checks against, and would build
// at every start before the window or the link.
import { ipcFail, type IpcResult } from '../../src-shared/ipc/result'
import { endWorker, firstWord, workerEntry } from '../app/worker'
import { EventBus, type EventSink } from '../events/bus'
import type { IpcCallContext } from '../ipc'
import { fromCrossing } from './crossing'
import type { FromThread, Notice, Snapshot, ThreadData, ToThread } from './protocol'
import type { MainThreadDeps } from './services'

/** The app's services as the window's transports (Electron IPC, the browser bridge) use them. */
export interface AppServices {
  /** `thread`: in the services thread; `main-thread`: here, as asked or as a fallback. */
  readonly where: 'thread' | 'main-thread'
  /** Why a thread was asked for and the services run on the main thread instead. */
  readonly fallback?: string
  /** Validates and runs one call of the IPC contract (`dispatchIpc` in the services' thread). */
  dispatch: (channel: string, args: unknown, context: IpcCallContext) => Promise<IpcResult<unknown>>
  /** Every event of the host, across switches of profile; returns the unsubscribe. */
  onEvent: (sink: EventSink) => () => void
  /** The warnings a window opening now should be told. */
  readonly notices: readonly Notice[]
  /** The latest sync status. */
  syncStatus: () => SyncStatus
  /** Closes the core (the sync stopped, flow runs canceled, databases closed) and the thread. */
  close: () => Promise<void>
}

export interface StartServicesOptions extends Omit<ThreadData, 'canChooseFolder'>, MainThreadDeps {
  /** `thread` (the default) or `main-thread` (a test that needs one thread, or a fallback). */
  where?: 'thread' | 'main-thread'
}

/** How long the thread may take to open (tsx compiles it from the sources on a first run). */
export const START_TIMEOUT_MS = 120_000
/** How long `close` waits for the core to close in the thread before the thread is ended. */
export const CLOSE_TIMEOUT_MS = 60_000

const STOPPED = {
  code: 'UNAVAILABLE',
  message: "Atelier's local services stopped unexpectedly. Restart Atelier; the log says why.",
}

/**
 * Opens the app's services in a thread of their own (or here) and resolves once they are open.
 * Rejects with what opening them threw (a `SecretsError` or `ServiceError` of the profile, as
 * `CoreHost.open` does); a thread that cannot start at all falls back to this thread.
 */
export async function startServices(options: StartServicesOptions): Promise<AppServices> {
  const { where = 'thread', openExternal, chooseFolder, ...data } = options
  const deps: MainThreadDeps = { openExternal, ...(chooseFolder ? { chooseFolder } : {}) }
  if (where === 'main-thread') return inThisThread(data, deps)
  const entry = workerEntry(import.meta.url, './thread-entry.mjs', './services-thread.js')
  if (entry === null) return inThisThread(data, deps, 'this build has no services thread beside it')
  const worker = new Worker(entry, {
    workerData: { ...data, canChooseFolder: chooseFolder !== undefined } satisfies ThreadData,
  })
  const started = await firstWord(
    worker,
    (message: FromThread): { snapshot: Snapshot } | { error: Error } | undefined =>
      message.type === 'ready'
        ? { snapshot: message.snapshot }
        : message.type === 'failed'
          ? { error: fromCrossing(message.error) }
          : undefined,
    START_TIMEOUT_MS,
  )
  if ('problem' in started) {
    await worker.terminate()
    return inThisThread(data, deps, `the services thread could not be used: ${started.problem}`)
  }
  if ('snapshot' in started.value) return new ThreadServices(worker, started.value.snapshot, deps)
  await worker.terminate()
  throw started.value.error
}

async function inThisThread(
  data: Omit<ThreadData, 'canChooseFolder'>,
  deps: MainThreadDeps,
  fallback?: string,
): Promise<AppServices> {
  // Loaded only here: with the thread, this thread never loads the services' code (the core,
  // the databases, the sandbox), and starts the thread that much sooner.
  const { openServices } = await import('./services')
  const services = await openServices(data, deps)
  const { host } = services
  return {
    where: 'main-thread',
    ...(fallback === undefined ? {} : { fallback }),
    dispatch: services.dispatch,
    onEvent: host.onEvent,
    get notices() {
      return host.notices
    },
    syncStatus: () => host.syncStatus(),
    close: services.close,
  }
}

class ThreadServices implements AppServices {
  readonly where = 'thread'
  readonly #worker: Worker
  readonly #deps: MainThreadDeps
  #snapshot: Snapshot
  // A window's listener that throws must not keep the others from hearing; nothing to log here.
  readonly #events = new EventBus()
  readonly #calls = new Map<number, (result: IpcResult<unknown>) => void>()
  #nextId = 1
  /** Set once the thread is gone: every later call is answered with it. */
  #stopped: typeof STOPPED | null = null
  #closing: Promise<void> | null = null

  constructor(worker: Worker, snapshot: Snapshot, deps: MainThreadDeps) {
    this.#worker = worker
    this.#snapshot = snapshot
    this.#deps = deps
    worker.on('message', (message: FromThread) => {
      this.#receive(message)
    })
    worker.on('error', () => {
      this.#stop()
    })
    worker.on('exit', () => {
      this.#stop()
    })
  }

  get notices(): readonly Notice[] {
    return this.#snapshot.notices
  }

  syncStatus(): SyncStatus {
    return this.#snapshot.syncStatus
  }

  readonly onEvent = (sink: EventSink): (() => void) => this.#events.on(sink)

  // A property, like onEvent: the shells pass `services.dispatch` along on its own, and a
  // detached method lost its `this` (every call of the desktop window failed).
  readonly dispatch = (
    channel: string,
    args: unknown,
    context: IpcCallContext,
  ): Promise<IpcResult<unknown>> => {
    if (this.#stopped) return Promise.resolve(ipcFail(this.#stopped))
    if (this.#closing) return Promise.resolve(ipcFail(CLOSING))
    const id = this.#nextId++
    return new Promise((resolve) => {
      try {
        this.#post({ type: 'call', id, channel, args, context })
      } catch {
        resolve(
          ipcFail({
            code: 'INVALID_ARGUMENT',
            message: `The arguments of ${channel} are not plain data (text, numbers, lists, objects), so they cannot be sent.`,
          }),
        )
        return
      }
      this.#calls.set(id, resolve)
    })
  }

  close(): Promise<void> {
    this.#closing ??= this.#shutDown()
    return this.#closing
  }

  async #shutDown(): Promise<void> {
    if (this.#stopped) return
    await endWorker(
      this.#worker,
      () => {
        this.#post({ type: 'close' })
      },
      CLOSE_TIMEOUT_MS,
    )
  }

  #post(message: ToThread): void {
    this.#worker.postMessage(message)
  }

  #receive(message: FromThread): void {
    if (message.type === 'result') {
      const resolve = this.#calls.get(message.id)
      this.#calls.delete(message.id)
      resolve?.(message.result)
    } else if (message.type === 'event') {
      if (message.snapshot) this.#snapshot = message.snapshot
      this.#events.emit(message.event, message.payload as never)
    } else if (message.type === 'ask') {
      void this.#answer(message.id, message.ask)
    }
  }

  async #answer(id: number, ask: Extract<FromThread, { type: 'ask' }>['ask']): Promise<void> {
    try {
      const value =
        ask.what === 'openExternal'
          ? await this.#deps.openExternal(ask.url).then(() => null)
          : ((await this.#deps.chooseFolder?.()) ?? null)
      this.#post({ type: 'answer', id, value })
    } catch (error) {
      this.#post({ type: 'answer', id, error: error instanceof Error ? error.message : 'failed' })
    }
  }

  #stop(): void {
    if (this.#stopped) return
    this.#stopped = STOPPED
    for (const resolve of this.#calls.values()) resolve(ipcFail(STOPPED))
    this.#calls.clear()
    if (!this.#closing) {
      const notice: Notice = { level: 'error', message: STOPPED.message }
      this.#snapshot = { ...this.#snapshot, notices: [...this.#snapshot.notices, notice] }
      this.#events.emit('app.notice', notice)
    }
  }
}

const CLOSING = {
  code: 'UNAVAILABLE',
  message: 'Atelier is closing; this was not done.',
}
