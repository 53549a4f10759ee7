import { unavailableApi } from './unavailable-api'
import { act } from '@testing-library/react'
import type { AccountSummary, AppInfo } from '../../src-shared/domain/app'
import type { FlowSummary, StoredFlow } from '../../src-shared/domain/flow-editor'
import type { SearchResultItem } from '../../src-shared/domain/search'
import type { SyncStatus, SyncSummary } from '../../src-shared/domain/sync'
import type { AtelierApi } from '../../src-shared/ipc/api'
import type { IpcChannel } from '../../src-shared/ipc/contract'
import type { IpcEvents } from '../../src-shared/ipc/events'
import type { IpcError, IpcResult } from '../../src-shared/ipc/result'

/**
 * The IPC transport's double for the shell's tests: what the main process would answer, kept
 * in memory, and the events it would push (`emit`). Only the transport is doubled: the store,
 * the components and the words under test are the app's own.
 */

export const u = (n: number) => `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`

const ok = <T>(value: T): Promise<IpcResult<T>> => Promise.resolve({ ok: true, value })
const failed = (error: IpcError): Promise<IpcResult<never>> => Promise.resolve({ ok: false, error })

/** A local flow of two text nodes, as `flows.get` answers it. */
export function storedFlow(id: string, name: string, updatedMs = 1_000): StoredFlow {
  return {
    id,
    name,
    source: 'local',
    description: null,
    nodeCount: 2,
    updatedMs,
    versions: [],
    flow: {
      id,
      name,
      inputs: [],
      outputs: [],
      nodes: [1, 2].map((n) => ({
        id: u(Number(id.slice(-4)) * 10 + n),
        label: `Words ${n}`,
        type_code: 'builtin',
        builtin_node_code: 'text',
        x: n * 240,
        y: 0,
        config: {},
        inputs: [],
        outputs: [
          { id: u(Number(id.slice(-4)) * 10 + n + 5), name: 'text', variable_type_code: 'text' },
        ],
      })),
    },
  }
}

/** A run or an asset as the mirror's search lists it. */
export function found(kind: 'run' | 'asset', n: number, title: string, createdAt: string) {
  const base = {
    id: u(500 + n),
    orgId: u(77),
    createdAt,
    title,
    matchedIn: null,
    snippet: null,
    score: null,
  }
  return kind === 'run'
    ? ({
        ...base,
        kind,
        status: 'succeeded',
        model: 'atelier/text-to-image',
        cost: '0.0200',
      } satisfies SearchResultItem)
    : ({
        ...base,
        kind,
        mediaType: 'image',
        folderPath: '/Studies',
        sizeBytes: 2048,
      } satisfies SearchResultItem)
}

export function summary(over: Partial<SyncSummary> = {}): SyncSummary {
  return {
    outcome: 'ok',
    finishedAt: 1_000,
    elapsedMs: 120,
    fetched: 0,
    deleted: 0,
    message: null,
    code: null,
    ...over,
  }
}

export function idle(last: SyncSummary | null): SyncStatus {
  return { state: 'idle', lastOkAt: 1_000, last, progress: null, nextAt: null }
}

export const SYNCING: SyncStatus = {
  state: 'syncing',
  lastOkAt: 1_000,
  last: null,
  progress: { collection: 'runs', done: 10, step: 1, steps: 9 },
  nextAt: null,
}

export class ShellMain {
  readonly calls: { channel: IpcChannel; args: unknown }[] = []
  readonly flows = new Map<string, StoredFlow>()
  account: IpcResult<AccountSummary> = {
    ok: true,
    value: {
      profileName: null,
      organization: { id: u(77), name: 'Nordlys Studio' },
      balanceMicro: 12_345_678,
      backendKind: 'sandbox',
    },
  }
  searchItems: SearchResultItem[] = []
  status: SyncStatus = idle(summary())
  private created = 0
  private readonly listeners = new Map<string, Set<(payload: never) => void>>()

  constructor(flows: StoredFlow[] = []) {
    for (const flow of flows) this.flows.set(flow.id, flow)
  }

  callsTo(channel: IpcChannel): unknown[] {
    return this.calls.filter((call) => call.channel === channel).map((call) => call.args)
  }

  emit<E extends keyof IpcEvents>(event: E, payload: IpcEvents[E]) {
    for (const listener of this.listeners.get(event) ?? []) {
      ;(listener as (value: IpcEvents[E]) => void)(payload)
    }
  }

  listenerCount(event: keyof IpcEvents): number {
    return this.listeners.get(event)?.size ?? 0
  }

  private record(channel: IpcChannel, args?: unknown) {
    this.calls.push({ channel, args })
  }

  private summaries(): FlowSummary[] {
    return [...this.flows.values()]
      .map(({ flow: _flow, versions: _versions, ...rest }) => rest)
      .sort((a, b) => b.updatedMs - a.updatedMs)
  }

  readonly api: AtelierApi = {
    ...unavailableApi(),
    app: {
      getInfo: () => {
        this.record('app.getInfo')
        const info: AppInfo = {
          name: 'Atelier',
          version: '0.1.0',
          shell: 'web',
          platform: 'linux',
          backend: { kind: 'sandbox', label: 'Local sandbox', url: 'http://127.0.0.1:1' },
        }
        return ok(info)
      },
      openExternal: () => ok(null),
    },
    media: {
      preview: () => failed({ code: 'UNAVAILABLE', message: 'Not part of these tests.' }),
    },
    account: {
      summary: () => {
        this.record('account.summary')
        return Promise.resolve(structuredClone(this.account))
      },
    },
    sync: {
      getStatus: () => {
        this.record('sync.getStatus')
        return ok(structuredClone(this.status))
      },
      start: () => {
        this.record('sync.start')
        return ok(structuredClone(this.status))
      },
    },
    search: {
      query: (args) => {
        this.record('search.query', args)
        const words = (args.text ?? '').toLowerCase()
        const items = this.searchItems
          .filter((item) => item.title.toLowerCase().includes(words))
          .sort((a, b) => Date.parse(b.createdAt) - Date.parse(a.createdAt))
          .slice(0, args.limit ?? 20)
        return ok({
          mode: words === '' ? ('list' as const) : ('ranked' as const),
          items,
          next: null,
          bounded: false,
        })
      },
    },
    flows: {
      list: () => {
        this.record('flows.list')
        return ok(this.summaries())
      },
      get: (args) => {
        this.record('flows.get', args)
        const stored = this.flows.get(args.id)
        return stored
          ? ok(structuredClone(stored))
          : failed({ code: 'FLOW_NOT_FOUND', message: `No flow ${args.id}.` })
      },
      create: (args) => {
        this.record('flows.create', args)
        const stored = storedFlow(u(900 + ++this.created), args.name, 5_000 + this.created)
        this.flows.set(stored.id, stored)
        return ok(structuredClone(stored))
      },
      save: (args) => {
        this.record('flows.save', args)
        return ok({ updatedMs: 9_000 })
      },
      rename: () => failed({ code: 'UNAVAILABLE', message: 'Not part of these tests.' }),
      delete: () => failed({ code: 'UNAVAILABLE', message: 'Not part of these tests.' }),
      restore: () => failed({ code: 'UNAVAILABLE', message: 'Not part of these tests.' }),
      import: () => failed({ code: 'UNAVAILABLE', message: 'Not part of these tests.' }),
      export: () => failed({ code: 'UNAVAILABLE', message: 'Not part of these tests.' }),
      saveVersion: () => failed({ code: 'UNAVAILABLE', message: 'Not part of these tests.' }),
      restoreVersion: () => failed({ code: 'UNAVAILABLE', message: 'Not part of these tests.' }),
      check: (args) => {
        this.record('flows.check', args)
        return ok({ problems: [], estimate: { totalMicro: 0, byNode: {} }, balanceMicro: null })
      },
      palette: () => {
        this.record('flows.palette')
        return ok([])
      },
      runs: (args) => {
        this.record('flows.runs', args)
        return ok([])
      },
    },
    flowRuns: {
      start: () => failed({ code: 'UNAVAILABLE', message: 'Not part of these tests.' }),
      cancel: () => failed({ code: 'UNAVAILABLE', message: 'Not part of these tests.' }),
      resume: () => failed({ code: 'UNAVAILABLE', message: 'Not part of these tests.' }),
    },
    on: (event, listener) => {
      const set = this.listeners.get(event) ?? new Set()
      this.listeners.set(event, set)
      set.add(listener)
      return () => {
        set.delete(listener)
      }
    },
  }
}

/** Does what a person does, then lets what it started settle: the double's answers, effects. */
export async function settled(run: () => void): Promise<void> {
  await act(() => {
    run()
    return Promise.resolve()
  })
}
