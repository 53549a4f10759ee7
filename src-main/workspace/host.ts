import { rm } from 'node:fs/promises'
import { join } from 'node:path'
import type { AppSettings } from '../../src-shared/domain/settings'
import type { SyncStatus } from '../../src-shared/domain/sync'
import type { IpcEvents } from '../../src-shared/ipc'
import { sandboxDir } from '../app/paths'
import { openCore, type Backend, type Core, type CoreOptions } from '../core'
import { isDbError, MIRROR_FILE } from '../db'
import { CodedError } from '../errors/coded'
import { EventBus, type EventSink } from '../events/bus'
import type { Logger } from '../log'
import { isSecretsError, osKeychain, readProfiles, type Keychain } from '../secrets'
import { writeProfiles } from '../secrets/profiles-file'
import { isServiceError } from '../service'
import { coreSettingsOf, readAppSettings } from '../settings'
import { openProfileBackend, sandboxBackend, startHomeSandbox } from './backend'
import type { LocalSandbox } from './sandbox-thread'

export interface CoreHostOptions {
  home: string
  logger: Logger
  /** The OS keychain unless a test passes its own session's. */
  keychain?: Keychain
  /** The profile to start with (`atelier web --profile`); else the current one, else the sandbox. */
  profile?: string
  /**
   * A profile that cannot be opened at start (its key gone, its service unknown): the desktop
   * app falls back to the sandbox and says why; the browser mode throws, so that its command
   * can say it at the terminal before anything is served.
   */
  fallbackToSandbox?: boolean
  /**
   * A service given directly instead of a profile or the sandbox (the responsiveness benchmark's
   * sandbox, in a process of its own). Its key stays in memory, as a profile's does.
   */
  service?: GivenService
  /** Passed on to every core opened, e.g. fake timers or fewer retries in tests. */
  core?: Pick<
    CoreOptions,
    'afterSync' | 'backoff' | 'client' | 'clock' | 'timers' | 'firstSyncAfterMs'
  >
}

export interface GivenService {
  /** Shown as the profile's name; the mirror's cursors are kept under it too. */
  label: string
  url: string
  apiKey: string
  organizationId: string
}

type Notice = IpcEvents['app.notice']

const IDLE: SyncStatus = { state: 'idle', lastOkAt: null, last: null, progress: null, nextAt: null }

/**
 * Owns the backend and the core for the whole life of the app, so that a switch of profile, a
 * rebuilt mirror or a reset sandbox can close the core and open another while the window and its
 * event subscriptions stay. Lifecycle changes run one at a time; while one runs `core()` is
 * null and the channels answer UNAVAILABLE ("still opening").
 */
export class CoreHost {
  readonly home: string
  readonly keychain: Keychain
  readonly #options: CoreHostOptions
  readonly #logger: Logger
  /** Every core's events, and the workspace's own notices, across switches. */
  readonly #events: EventBus
  readonly #notices: Notice[] = []
  #backend: Backend | null = null
  #core: Core | null = null
  /** Why there is no core, as the window is told (UNAVAILABLE, LEDGER_DAMAGED…). */
  #unavailable: CodedError | null = null
  /** The local sandbox while it runs: the backend, or started beside a profile. */
  #sandbox: LocalSandbox | null = null
  /**
   * The port of the sandbox stopped while in use (offline on purpose): it starts again there,
   * where the open core still looks for it.
   */
  #pausedPort: number | null = null
  #unsubscribe: (() => void) | null = null
  #queue: Promise<unknown> = Promise.resolve()
  #closed = false

  constructor(options: CoreHostOptions) {
    this.#options = options
    this.home = options.home
    this.#logger = options.logger.child({ component: 'host' })
    this.#events = new EventBus((event, error) => {
      this.#logger.warn('an event listener failed', { event, err: error })
    })
    this.keychain = options.keychain ?? osKeychain()
  }

  backend(): Backend | null {
    return this.#backend
  }

  /** The core; null while it opens, `Unavailable` when it could not open (e.g. LEDGER_DAMAGED). */
  readonly core = (): Core | CodedError | null => this.#core ?? this.#unavailable

  /** The open core, or null while it opens, after it failed, or once closed. */
  openedCore(): Core | null {
    return this.#core
  }

  /** The profile in use; null: the local sandbox (or nothing yet). */
  inUse(): string | null {
    return this.#backend?.info.kind === 'service' ? this.#backend.profile : null
  }

  sandbox(): LocalSandbox | null {
    return this.#sandbox
  }

  /** Every core's events, across switches; returns the unsubscribe. */
  readonly onEvent = (sink: EventSink): (() => void) => this.#events.on(sink)

  syncStatus(): SyncStatus {
    return this.#core?.syncStatus() ?? IDLE
  }

  /** What a window opening now should be told: the core's notices, then the host's. */
  get notices(): readonly Notice[] {
    return [...(this.#core?.notices ?? []), ...this.#notices]
  }

  /** The first open: the profile asked for, else the current one, else the sandbox. */
  open(): Promise<void> {
    return this.#serial(async () => {
      try {
        this.#backend = await this.#firstBackend()
      } catch (error) {
        const profileProblem = isSecretsError(error) || isServiceError(error)
        if (profileProblem && !this.#options.fallbackToSandbox) throw error
        this.#logger.error('the local service could not start', { err: error })
        this.#unavailable = new CodedError(
          'UNAVAILABLE',
          'Atelier could not start its local service; the log says why.',
        )
        return
      }
      await this.#openCore()
    })
  }

  async #firstBackend(): Promise<Backend> {
    const given = this.#options.service
    if (given) {
      return {
        info: { kind: 'service', label: given.label, url: given.url },
        apiKey: given.apiKey,
        organizationId: given.organizationId,
        profile: given.label,
        close: () => Promise.resolve(),
      }
    }
    const wanted = this.#options.profile ?? (await readProfiles(this.home)).current
    if (wanted === null) return this.#sandboxBackend()
    try {
      return await openProfileBackend(this.home, wanted, this.keychain)
    } catch (error) {
      if (!this.#options.fallbackToSandbox) throw error
      if (!isSecretsError(error) && !isServiceError(error)) throw error
      this.#logger.warn('the current profile could not be used; the sandbox is', {
        profile: wanted,
        code: error.code,
      })
      this.#tell({
        level: 'warning',
        message: `Profile ${wanted} could not be used: ${error.message} Atelier is working with the local sandbox instead; fix or switch the profile in Settings.`,
      })
      return this.#sandboxBackend()
    }
  }

  /**
   * Closes the core and opens one on the profile's service (`null`: the local sandbox), and
   * makes that the current profile for the next start and for `atelier`. The new backend is
   * opened first: a profile whose key is gone leaves the app as it was.
   */
  switchTo(name: string | null): Promise<void> {
    return this.#serial(async () => {
      if (name === this.inUse() && this.#backend !== null) return
      const next =
        name === null
          ? await this.#sandboxBackend()
          : await openProfileBackend(this.home, name, this.keychain)
      await this.#closeCore()
      const previous = this.#backend
      this.#backend = next
      // Nothing needs the sandbox once a profile is in use; it can be started again in Settings.
      if (previous?.info.kind === 'sandbox' && next.info.kind === 'service') {
        await this.#stopSandbox()
      }
      const state = await readProfiles(this.home)
      await writeProfiles(this.home, { ...state, current: name })
      await this.#openCore()
      this.#tell({
        level: 'info',
        message:
          name === null
            ? 'Atelier now works with the local sandbox.'
            : `Atelier now works with profile ${name} (${next.info.url}).`,
      })
    })
  }

  /** Starts an empty mirror (the core's own recovery for a damaged one) and opens the core again. */
  rebuildMirror(): Promise<Core> {
    return this.#serial(async () => {
      await this.#closeCore()
      const mirror = join(this.home, MIRROR_FILE)
      for (const file of [mirror, `${mirror}-wal`, `${mirror}-shm`]) await rm(file, { force: true })
      this.#logger.info('the mirror was emptied on request; the next sync refills it')
      const core = await this.#openCore()
      if (!core) throw new Error('The core did not open after the mirror was emptied.')
      return core
    })
  }

  startSandbox(): Promise<void> {
    return this.#serial(async () => {
      if (this.#sandbox !== null) return
      const port = this.#pausedPort
      this.#pausedPort = null
      const inUse = this.#backend?.info.kind === 'sandbox' && this.#core !== null
      if (!inUse || port === null) {
        this.#sandbox = await startHomeSandbox(this.home)
        return
      }
      try {
        this.#sandbox = await startHomeSandbox(this.home, port)
      } catch (error) {
        // Its port was taken meanwhile: a new one, and the core opened again to look there.
        this.#logger.warn('the local sandbox could not take its port again', { port, err: error })
        await this.#closeCore()
        this.#backend = await this.#sandboxBackend()
        await this.#openCore()
        return
      }
      // Offline on purpose until now: back at once, not at the next probe.
      void this.#core?.syncNow()
    })
  }

  /**
   * Stops the sandbox, even while Atelier works with it: the core stays open on its address and
   * goes offline at once (runs are refused, the mirror stays browsable) until it starts again.
   */
  stopSandbox(): Promise<void> {
    return this.#serial(async () => {
      const running = this.#sandbox
      if (running === null || this.#backend?.info.kind !== 'sandbox' || this.#core === null) {
        await this.#stopSandbox()
        return
      }
      this.#pausedPort = Number(new URL(running.url).port)
      this.#sandbox = null
      await running.close().catch((error: unknown) => {
        this.#logger.warn('the local sandbox did not stop cleanly', { err: error })
      })
      this.#logger.info('the local sandbox was stopped while in use: working offline')
      // Answered once the app knows it is offline, so the next run is refused at once.
      await this.#core.syncNow()
    })
  }

  /**
   * Wipes `<home>/sandbox` and nothing else. While the sandbox is the backend the core is closed
   * first and opened again on the new, empty sandbox; one that ran beside a profile runs again.
   */
  resetSandbox(): Promise<void> {
    return this.#serial(async () => {
      const inUse = this.#backend?.info.kind === 'sandbox'
      const wasRunning = this.#sandbox !== null
      if (inUse) await this.#closeCore()
      await this.#stopSandbox()
      await rm(sandboxDir(this.home), { recursive: true, force: true })
      this.#logger.info('the local sandbox was reset')
      if (inUse) {
        this.#backend = await this.#sandboxBackend()
        await this.#openCore()
      } else if (wasRunning) {
        this.#sandbox = await startHomeSandbox(this.home)
      }
    })
  }

  /** Settings changed: the running core follows them (the next open reads them from the file). */
  applySettings(settings: AppSettings): void {
    this.#core?.applySettings(coreSettingsOf(settings))
  }

  close(): Promise<void> {
    this.#closed = true
    return this.#serial(async () => {
      await this.#closeCore()
      await this.#stopSandbox()
      this.#backend = null
      this.#events.clear()
    })
  }

  #serial<T>(work: () => Promise<T>): Promise<T> {
    const next = this.#queue.then(work)
    this.#queue = next.catch(() => undefined)
    return next
  }

  #tell(notice: Notice): void {
    // Warnings stay for windows that open later; info passes by.
    if (notice.level !== 'info') this.#notices.push(notice)
    this.#emit('app.notice', notice)
  }

  readonly #emit: EventSink = (event, payload) => {
    this.#events.emit(event, payload)
  }

  async #sandboxBackend(): Promise<Backend> {
    this.#sandbox ??= await startHomeSandbox(this.home)
    this.#pausedPort = null
    const backend = sandboxBackend(this.#sandbox)
    // The host stops the sandbox itself (`#stopSandbox`): a backend closed by a switch must not.
    return { ...backend, close: () => Promise.resolve() }
  }

  async #stopSandbox(): Promise<void> {
    if (this.#backend?.info.kind === 'sandbox' && this.#core !== null) return
    const running = this.#sandbox
    this.#sandbox = null
    await running?.close().catch((error: unknown) => {
      this.#logger.warn('the local sandbox did not stop cleanly', { err: error })
    })
  }

  async #openCore(): Promise<Core | null> {
    const backend = this.#backend
    if (backend === null || this.#closed) return null
    this.#unavailable = null
    try {
      const settings = await readAppSettings(this.home).catch((error: unknown) => {
        // Damaged settings must not keep the app from opening: the defaults do, and it says so.
        this.#tell({ level: 'warning', message: (error as Error).message })
        return undefined
      })
      const core = openCore({
        home: this.home,
        backend,
        logger: this.#options.logger,
        ...this.#options.core,
        ...(settings ? { settings: coreSettingsOf(settings) } : {}),
      })
      this.#unsubscribe = core.onEvent(this.#emit)
      this.#core = core
      // A window already open hears the new core's status at once, not at its first change.
      this.#emit('sync.status', core.syncStatus())
      return core
    } catch (error) {
      this.#logger.error('the local data could not open', { err: error })
      this.#unavailable = isDbError(error)
        ? new CodedError(error.code, error.message)
        : new CodedError('UNAVAILABLE', 'Atelier could not open its local data; the log says why.')
      return null
    }
  }

  async #closeCore(): Promise<void> {
    const core = this.#core
    this.#core = null
    this.#unsubscribe?.()
    this.#unsubscribe = null
    await core?.close().catch((error: unknown) => {
      this.#logger.warn('the core did not close cleanly', { err: error })
    })
  }
}
