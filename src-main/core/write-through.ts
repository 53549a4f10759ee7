import { setTimeout as delay } from 'node:timers/promises'
import { RUN_TERMINAL_STATUSES, type Run, type RunStatusCode } from '../../src-shared/api'
import type { FlowRunEventMessage } from '../../src-shared/domain/flow-editor'
import type { FlowRunEvent } from '../../src-shared/domain/flow-run'
import type { MirrorChange } from '../../src-shared/ipc'
import type { Mirror } from '../db'
import type { EventSink } from '../events/bus'
import type { Logger } from '../log'
import type { ServiceClient } from '../service'
import type { AccountReader } from './account'

/** A re-run is read again after this, then less and less often, up to `FOLLOW_MAX_WAIT_MS`. */
const FOLLOW_FIRST_WAIT_MS = 500
const FOLLOW_MAX_WAIT_MS = 5_000
/** A re-run still unfinished after this is left to the sync: the app does not poll for ever. */
const FOLLOW_GIVE_UP_MS = 60 * 60 * 1000
/** The contract's largest page: a batch's runs are read in as few requests as it allows. */
const BATCH_PAGE = 500

export interface WriteThroughOptions {
  client: ServiceClient
  mirror: Mirror
  account: AccountReader
  /** Where `mirror.changed` and `account.changed` go: the core's event bus. */
  emit: EventSink
  logger: Logger
}

/**
 * What the app did itself, in the mirror the moment the service answers and told to every
 * view at once: the lists do not wait for the next sync to learn of runs the app started.
 */
export interface WriteThrough {
  /**
   * Every event of a flow run started here: each remote run is read into the mirror when it is
   * made and again when its node ends; the flow run's end reads the balance again once those
   * writes are in.
   */
  flowRunEvent: (message: FlowRunEventMessage) => void
  /**
   * A run the service just answered has been written (a refresh, a cancel). `started`: the app
   * just made it (a re-run), so it is followed to its end, and the charge read then.
   */
  runWritten: (run: Run, started: boolean) => void
  /** Records of these lists were written by the caller: the views read them again. */
  changed: (collections: readonly MirrorChange[]) => void
  /** Something charged or refunded credit: the balance is read again, and told. */
  balanceChanged: () => void
  /** Stops following and reading, and waits for what is under way. Idempotent. */
  close: () => Promise<void>
}

const isTerminal = (status: RunStatusCode) =>
  (RUN_TERMINAL_STATUSES as readonly RunStatusCode[]).includes(status)

/** The remote runs one node run made: one run, or the runs of one batch. */
interface NodeRemote {
  runIds: Set<string>
  batchId: string | null
}

/** What a node's end names itself, when its start was not heard (a flow run resumed). */
function endedRemote(event: FlowRunEvent): NodeRemote | null {
  if (event.type !== 'node-succeeded' || event.remoteRunId === undefined) return null
  return { runIds: new Set([event.remoteRunId]), batchId: event.batchId ?? null }
}

export function writeThrough(options: WriteThroughOptions): WriteThrough {
  const { client, mirror, account, emit, logger } = options
  const closing = new AbortController()
  /** Everything under way, for `close` to wait for. */
  const underWay = new Set<Promise<unknown>>()
  /** Per flow run: its node runs' remote runs, and the writes not yet done. */
  const flowRuns = new Map<string, { nodes: Map<string, NodeRemote>; writes: Set<Promise<void>> }>()
  /** Batches being read: the item events of one batch come together and need one read. */
  const batchReads = new Map<string, Promise<void>>()

  const track = <T>(work: Promise<T>): Promise<T> => {
    underWay.add(work)
    void work.finally(() => underWay.delete(work)).catch(() => undefined)
    return work
  }

  const write = (runs: readonly Run[]) => {
    // After close the databases may be gone; the next sync brings what was not written.
    if (closing.signal.aborted || runs.length === 0) return
    // Older than the mirror's copy (a slow read overtaken by a later one): nothing to tell.
    const written = mirror.transaction(() => mirror.runs.upsertPage(runs))
    if (written > 0) emit('mirror.changed', { collections: ['runs'] })
  }

  const readRun = (runId: string) =>
    client.get('/v1/runs/{run_id}', {
      params: { path: { run_id: runId } },
      signal: closing.signal,
    })

  const readBatch = async (batchId: string): Promise<Run[]> => {
    const runs: Run[] = []
    for await (const run of client.list('/v1/runs', {
      params: { query: { q: `batch_id=${batchId}`, limit: BATCH_PAGE } },
      signal: closing.signal,
    })) {
      runs.push(run)
    }
    return runs
  }

  /** Never rejects: a run that could not be read comes with the next sync. */
  const readInto = async (what: string, read: () => Promise<Run[]>): Promise<void> => {
    try {
      write(await read())
    } catch (error) {
      if (!closing.signal.aborted)
        logger.debug(`${what} could not be written through`, { err: error })
    }
  }

  const flowRunOf = (flowRunId: string) => {
    let held = flowRuns.get(flowRunId)
    if (!held) {
      held = { nodes: new Map(), writes: new Set() }
      flowRuns.set(flowRunId, held)
    }
    return held
  }

  const during = (flowRunId: string, work: Promise<void>) => {
    const { writes } = flowRunOf(flowRunId)
    writes.add(track(work))
  }

  const remoteOf = (flowRunId: string, key: string): NodeRemote => {
    const { nodes } = flowRunOf(flowRunId)
    let remote = nodes.get(key)
    if (!remote) {
      remote = { runIds: new Set(), batchId: null }
      nodes.set(key, remote)
    }
    return remote
  }

  const batchInto = (batchId: string): Promise<void> => {
    const reading = batchReads.get(batchId)
    if (reading) return reading
    const read: Promise<void> = readInto(`the runs of batch ${batchId}`, () =>
      readBatch(batchId),
    ).finally(() => {
      // A newer read may have taken its place (the node ended): that one stays.
      if (batchReads.get(batchId) === read) batchReads.delete(batchId)
    })
    batchReads.set(batchId, read)
    return read
  }

  const remoteInto = (remote: NodeRemote): Promise<void> => {
    if (remote.batchId !== null) return batchInto(remote.batchId)
    return Promise.all(
      [...remote.runIds].map((runId) =>
        readInto(`the run ${runId}`, async () => [await readRun(runId)]),
      ),
    ).then(() => undefined)
  }

  const balanceChanged = () => {
    if (closing.signal.aborted) return
    account.invalidate()
    void track(
      account.summary().then((summary) => {
        // Unknown (offline, refused): the views keep the last balance they were told.
        if (summary.balanceMicro !== null && !closing.signal.aborted) {
          emit('account.changed', summary)
        }
      }),
    ).catch((error: unknown) => {
      logger.debug('the balance could not be read again', { err: error })
    })
  }

  /** Reads a run the app started until it ends, writing each change; then its charge. */
  const follow = async (runId: string) => {
    const giveUpAt = Date.now() + FOLLOW_GIVE_UP_MS
    let wait = FOLLOW_FIRST_WAIT_MS
    let told = ''
    while (Date.now() < giveUpAt) {
      await delay(wait, undefined, { signal: closing.signal, ref: false })
      wait = Math.min(FOLLOW_MAX_WAIT_MS, Math.round(wait * 1.5))
      const run = await readRun(runId)
      const state = `${run.status_code}:${run.updated_at}`
      if (state !== told) {
        told = state
        write([run])
      }
      if (isTerminal(run.status_code)) {
        balanceChanged()
        return
      }
    }
  }

  return {
    flowRunEvent: ({ flowRunId, event }) => {
      if (closing.signal.aborted) return
      switch (event.type) {
        case 'node-remote-run': {
          const remote = remoteOf(flowRunId, `${event.nodeId}#${event.attempt}`)
          remote.runIds.add(event.runId)
          if (event.batchId !== undefined) {
            remote.batchId = event.batchId
            during(flowRunId, batchInto(event.batchId))
          } else {
            during(
              flowRunId,
              readInto(`the run ${event.runId}`, async () => [await readRun(event.runId)]),
            )
          }
          return
        }
        case 'node-succeeded':
        case 'node-failed':
        case 'node-canceled': {
          const key = `${event.nodeId}#${event.attempt}`
          const remote = flowRuns.get(flowRunId)?.nodes.get(key) ?? endedRemote(event)
          if (!remote) return
          flowRuns.get(flowRunId)?.nodes.delete(key)
          // Read again, not joined: a batch read under way may predate the items' ends.
          if (remote.batchId !== null) batchReads.delete(remote.batchId)
          during(flowRunId, remoteInto(remote))
          return
        }
        case 'flow-finished': {
          const held = flowRuns.get(flowRunId)
          flowRuns.delete(flowRunId)
          // The balance after the runs' writes: each view then shows runs and charge together.
          void track(Promise.all([...(held?.writes ?? [])])).then(balanceChanged)
          return
        }
        default:
          return
      }
    },

    runWritten: (run, started) => {
      if (closing.signal.aborted) return
      emit('mirror.changed', { collections: ['runs'] })
      if (!started || isTerminal(run.status_code)) return
      void track(follow(run.id)).catch((error: unknown) => {
        if (!closing.signal.aborted) {
          logger.debug('a re-run could not be followed to its end', { runId: run.id, err: error })
        }
      })
    },

    changed: (collections) => {
      if (closing.signal.aborted || collections.length === 0) return
      emit('mirror.changed', { collections: [...collections] })
    },

    balanceChanged,

    close: async () => {
      closing.abort()
      await Promise.allSettled([...underWay])
    },
  }
}
