// A CommonJS module whose names Node's ESM loader cannot see: reached through its default.
import cliProgress, { type Options, type Params, type SingleBar } from 'cli-progress'
import { mediaStep, outboxStep } from '../../core/steps'
import { openDatabases, type DbNotice } from '../../db'
import {
  SYNC_COLLECTIONS,
  SyncEngine,
  type SyncCollection,
  type SyncProgress,
  type SyncResult,
} from '../../sync'
import { connect } from '../connect'
import { EXIT } from '../exit-codes'
import { processIo, type CliIo } from '../io'
import { organizationOf } from '../organization'
import type { CommandContext } from '../context'
import { CliError } from '../errors'

/** A step that has not finished by then stops where it is; the next sync goes on from there. */
const STEP_TIMEOUT_MS = 10 * 60 * 1000

function summary(result: SyncResult): string {
  const rows = result.collections.map(
    (c) =>
      `${c.collection.padEnd(14)} ${String(c.fetched).padStart(8)} fetched ${String(c.written).padStart(8)} written ${String(c.tombstones).padStart(6)} deleted`,
  )
  return [...rows, `${result.state} in ${(result.elapsedMs / 1000).toFixed(1)} s`].join('\n')
}

/**
 * A count as people read it, 12,345: the same as `toLocaleString('en-US')` for whole numbers,
 * without loading Intl's number formatting, which cost a sync with nothing new 30 ms.
 */
const number = (n: number) => String(n).replace(/\B(?=(\d{3})+(?!\d))/g, ',')

/** What `done` counts in a collection's progress. */
const unitOf = (collection: SyncCollection) => (collection === 'run-details' ? 'runs' : 'records')

/** Records per second since the collection started, as people read it. */
function rateOf(done: number, since: number, now: number): string {
  const seconds = (now - since) / 1000
  return seconds <= 0 ? '–' : number(Math.round(done / seconds))
}

interface Shown {
  startedMs: number
  /** Where `done` stood at the start (a resumed sync), so the rate counts this sync's work. */
  startDone: number
}

interface BarPayload {
  name: string
  rate: string
  unit: string
  indeterminate: boolean
}

/**
 * Progress as people see it: on a terminal, one bar per collection (name, done/total, rate,
 * ETA; with no total the bar gives way to a count, since there is nothing to fill); anywhere
 * else, one line per collection when it finishes, so a log gets a line per collection rather
 * than one per page.
 */
function progressDisplay(io: CliIo): { onProgress: (p: SyncProgress) => void; stop: () => void } {
  const shown = new Map<SyncCollection, Shown>()
  const started = (p: SyncProgress): Shown => {
    let entry = shown.get(p.collection)
    if (!entry) {
      entry = { startedMs: Date.now(), startDone: p.done }
      shown.set(p.collection, entry)
    }
    return entry
  }
  const terminal = io.stderr === processIo.stderr && process.stderr.isTTY
  if (!terminal) {
    return {
      onProgress: (p) => {
        const entry = started(p)
        if (p.phase !== 'done') return
        const now = Date.now()
        const unit = unitOf(p.collection)
        const requests = `${number(p.pages)} ${p.pages === 1 ? 'request' : 'requests'}`
        const time = `${((now - entry.startedMs) / 1000).toFixed(1)} s`
        const rate = `${rateOf(p.done - entry.startDone, entry.startedMs, now)} ${unit}/s`
        io.stderr(`${p.collection}: ${number(p.done)} ${unit}, ${requests}, ${time} (${rate})\n`)
      },
      stop: () => undefined,
    }
  }
  const format = (options: Options, params: Params, payload: BarPayload) => {
    const value = number(params.value)
    const rate = `${payload.rate} ${payload.unit}/s`
    if (payload.indeterminate) return `${payload.name} ${value} ${payload.unit} | ${rate}`
    const eta =
      params.value >= params.total ? '0s' : cliProgress.Format.TimeFormat(params.eta, options, 5)
    const bar = cliProgress.Format.BarFormat(params.progress, options)
    return `${payload.name} ${bar} ${value}/${number(params.total)} | ${rate} | ETA ${eta}`
  }
  const bars = new cliProgress.MultiBar({
    stream: process.stderr,
    format,
    hideCursor: true,
    barsize: 30,
    etaBuffer: 20,
  })
  const byCollection = new Map<SyncCollection, SingleBar>()
  const width = Math.max(...SYNC_COLLECTIONS.map((name) => name.length))
  return {
    onProgress: (p) => {
      const entry = started(p)
      const payload: BarPayload = {
        name: p.collection.padEnd(width),
        rate: rateOf(p.done - entry.startDone, entry.startedMs, Date.now()),
        unit: unitOf(p.collection),
        indeterminate: p.total === undefined,
      }
      let bar = byCollection.get(p.collection)
      if (!bar) {
        bar = bars.create(p.total ?? 0, p.done, payload)
        byCollection.set(p.collection, bar)
      }
      if (p.total !== undefined) bar.setTotal(p.total)
      bar.update(p.done, payload)
      if (p.phase === 'done') bar.stop()
    },
    stop: () => {
      bars.stop()
    },
  }
}

/** What opening the databases had to do, in plain words, and what this sync does about it. */
function tellNotices(io: CliIo, notices: readonly DbNotice[]): void {
  for (const notice of notices) {
    const refill =
      notice.code === 'MIRROR_REBUILT'
        ? ' This sync is refilling it from the service now: everything is downloaded again, which takes longer than a usual sync.'
        : ''
    io.stderr(`${notice.message}${refill}\n`)
  }
}

/**
 * `atelier sync`: the mirror brought up to date (the collections asked for, or all of them and
 * then the outbox and the media), with progress on stderr.
 */
export async function sync(
  context: CommandContext,
  collections: SyncCollection[] | undefined,
  flags: { media: boolean },
): Promise<void> {
  const globals = context.globals()
  const { profile, client, logger } = await connect(context, { command: 'sync' })
  const orgId = await organizationOf(client, profile.organization_id).catch((error: unknown) => {
    logger.close()
    throw error
  })
  const dbs = openDatabases(globals.home)
  tellNotices(context.io, dbs.notices)
  const display = progressDisplay(context.io)
  try {
    const onProgress = (p: SyncProgress) => {
      logger.debug(`sync ${p.collection} ${p.phase}`, { ...p })
      display.onProgress(p)
    }
    const controller = new AbortController()
    // Ctrl-C stops after the page being written; the next sync resumes there.
    const stop = () => {
      controller.abort()
    }
    process.once('SIGINT', stop)
    let result: SyncResult
    try {
      result = await new SyncEngine({
        client,
        mirror: dbs.mirror,
        profileName: profile.name,
        orgId,
        onProgress,
        // Named in --collections, the catalogs are read whatever their age.
        ...(collections?.includes('catalogs') ? { catalogsMaxAgeMs: 0 } : {}),
      }).syncAll({ signal: controller.signal, ...(collections ? { collections } : {}) })
    } finally {
      process.off('SIGINT', stop)
      display.stop()
    }
    logger.info(`sync ${result.state}`, { ...result })
    if (result.state !== 'ok') {
      throw new CliError(
        result.message ?? result.state,
        EXIT.failed,
        result.code ?? result.state.toUpperCase(),
      )
    }
    // After a whole pull, the same steps as the app's background sync: writes made offline
    // go out, then new outputs and thumbnails come in. A partial pull is a repair tool.
    const steps = collections
      ? []
      : flags.media
        ? [outboxStep(), mediaStep(globals.home)]
        : [outboxStep()]
    const after: Record<string, object> = {}
    const lines: string[] = []
    try {
      for (const step of steps) {
        const outcome = await step.run({
          result,
          client,
          databases: dbs,
          profile: profile.name,
          orgId,
          signal: AbortSignal.timeout(STEP_TIMEOUT_MS),
          logger,
          progress: () => undefined,
        })
        if (outcome) {
          after[step.name] = outcome.report
          lines.push(`${step.name.padEnd(14)} ${outcome.summary}`)
        }
      }
    } finally {
      for (const step of steps) await step.close?.()
    }
    context.print({ ...result, ...after }, [summary(result), ...lines].join('\n'))
  } finally {
    dbs.close()
    logger.close()
  }
}
