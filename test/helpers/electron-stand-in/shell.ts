import { fork, type ChildProcess } from 'node:child_process'
import { join } from 'node:path'

/**
 * The test's side of the stand-in: the built Electron shell booted in a child process
 * (launch.mjs) on the stand-in for Electron (runtime.mjs), and everything it asked Electron to
 * do, as records in the order it did it.
 */

export interface ShellRecord {
  kind: string
  detail: Record<string, unknown>
}

export interface BootOptions {
  /** The built main bundle (out/main/index.js). */
  main: string
  /** `app.getPath('userData')`: the app's home. */
  userData: string
  /** The child's HOME, so that nothing reaches the real one. */
  home: string
  /** Another instance holds the single-instance lock. */
  lockRefused?: boolean
  /** The events the page subscribes to as it loads (see launch.mjs). */
  pageEvents?: readonly string[]
}

export interface Exit {
  code: number | null
  signal: NodeJS.Signals | null
}

/** A safety net that names what never came; every wait ends on a record well before it. */
const WAIT_MS = 15_000

const launcher = join(import.meta.dirname, 'launch.mjs')

interface Waiter {
  kind: string
  match: (detail: Record<string, unknown>) => boolean
  resolve: (record: ShellRecord) => void
}

export class StandInShell {
  readonly records: ShellRecord[] = []
  readonly exited: Promise<Exit>
  #child: ChildProcess
  #output = ''
  #waiters = new Set<Waiter>()
  #nextRequest = 1
  #exit: Exit | null = null

  private constructor(child: ChildProcess) {
    this.#child = child
    const collect = (chunk: Buffer) => {
      this.#output += chunk.toString()
    }
    child.stdout?.on('data', collect)
    child.stderr?.on('data', collect)
    child.on('message', (message: { type: string } & ShellRecord) => {
      if (message.type !== 'record') return
      const record = { kind: message.kind, detail: message.detail }
      this.records.push(record)
      for (const waiter of this.#waiters) {
        if (waiter.kind === record.kind && waiter.match(record.detail)) {
          this.#waiters.delete(waiter)
          waiter.resolve(record)
        }
      }
    })
    this.exited = new Promise((resolve) => {
      child.once('exit', (code, signal) => {
        this.#exit = { code, signal }
        resolve(this.#exit)
      })
    })
  }

  static boot(options: BootOptions): StandInShell {
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      HOME: options.home,
      ATELIER_STAND_IN_MAIN: options.main,
      ATELIER_STAND_IN_USER_DATA: options.userData,
      ATELIER_STAND_IN_LOCK: options.lockRefused ? 'refused' : 'granted',
      ATELIER_STAND_IN_PAGE_EVENTS: (options.pageEvents ?? []).join(','),
    }
    // A dev server's URL would make the window load it instead of the built page, and a log
    // level from the developer's shell would add a warning of its own.
    delete env.ELECTRON_RENDERER_URL
    delete env.ATELIER_LOG_LEVEL
    const child = fork(launcher, [], {
      env,
      // Plain Node, as Electron's main is: none of vitest's loaders or flags.
      execArgv: [],
      serialization: 'advanced',
      stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
    })
    return new StandInShell(child)
  }

  /** The details of every record of this kind so far. */
  of(kind: string): Record<string, unknown>[] {
    return this.records.filter((record) => record.kind === kind).map((record) => record.detail)
  }

  /** Where the first record of this kind (and match) is in the order, -1 if none. */
  indexOf(kind: string, match: (detail: Record<string, unknown>) => boolean = () => true): number {
    return this.records.findIndex((record) => record.kind === kind && match(record.detail))
  }

  /** The first record of this kind (and match), from those so far or the next ones. */
  waitFor(
    kind: string,
    match: (detail: Record<string, unknown>) => boolean = () => true,
  ): Promise<ShellRecord> {
    const found = this.records.find((record) => record.kind === kind && match(record.detail))
    if (found) return Promise.resolve(found)
    return new Promise((resolve, reject) => {
      const waiter: Waiter = {
        kind,
        match,
        resolve: (record) => {
          clearTimeout(timer)
          resolve(record)
        },
      }
      const timer = setTimeout(() => {
        this.#waiters.delete(waiter)
        reject(new Error(`No "${kind}" record came from the shell.\n${this.describe()}`))
      }, WAIT_MS)
      this.#waiters.add(waiter)
    })
  }

  /** Runs one of launch.mjs's commands and resolves with its value (rejects with its error). */
  async request<T>(command: string, payload: Record<string, unknown> = {}): Promise<T> {
    const id = this.#nextRequest++
    const waiting = this.waitFor('reply', (detail) => detail.id === id)
    this.#child.send({ id, command, payload })
    const { detail } = await waiting
    if (detail.ok !== true)
      throw new Error(`${command} failed in the shell: ${String(detail.error)}`)
    return detail.value as T
  }

  /** The records so far and the child's output, for a failure's message. */
  describe(): string {
    const records = this.records
      .filter((record) => record.kind !== 'ipcMain.handle')
      .map((record) => `  ${record.kind} ${JSON.stringify(record.detail).slice(0, 300)}`)
    const exit = this.#exit ? `exited: ${JSON.stringify(this.#exit)}` : 'still running'
    return `The shell's records (ipcMain.handle left out), ${exit}:\n${records.join('\n')}\nIts output:\n${this.#output}`
  }

  /** Ends the child if it still runs (a test that failed half-way), then waits for its exit. */
  async stop(): Promise<Exit> {
    if (this.#exit === null) this.#child.kill('SIGKILL')
    return this.exited
  }
}
