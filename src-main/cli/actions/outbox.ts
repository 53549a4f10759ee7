import { openDatabases, type Databases, type OutboxState } from '../../db'
import {
  discardRefused,
  isOutboxError,
  OutboxReplayer,
  retryRefused,
  toItem,
  type OutboxItem,
  type ReplayReport,
} from '../../outbox'
import { isSecretsError, readProfiles } from '../../secrets'
import { connect, type Connection } from '../connect'
import { EXIT } from '../exit-codes'
import { organizationOf } from '../organization'
import type { CommandContext } from '../context'
import { CliError } from '../errors'

const LIST_LIMIT = 500

/** OutboxError → CliError: bad input exits 2, a state that forbids the action exits 1. */
function cliError(error: unknown): unknown {
  if (!isOutboxError(error)) return error
  return new CliError(
    error.message,
    error.isInputError || error.code === 'ENTRY_NOT_REJECTED' || error.code === 'ENTRY_NOT_FOUND'
      ? EXIT.usage
      : EXIT.failed,
    error.code,
  )
}

/** Replays with Ctrl-C stopping after the request under way (the entry stays in its place). */
async function replayScope(
  dbs: Databases,
  connection: Connection,
  orgId: string,
): Promise<ReplayReport> {
  const controller = new AbortController()
  const stop = () => {
    controller.abort()
  }
  process.once('SIGINT', stop)
  try {
    return await new OutboxReplayer({
      client: connection.client,
      ledger: dbs.ledger,
      mirror: dbs.mirror,
      profileName: connection.profile.name,
      orgId,
    }).replay({ signal: controller.signal })
  } finally {
    process.off('SIGINT', stop)
  }
}

function age(ms: number): string {
  const seconds = Math.max(0, Math.round(ms / 1000))
  if (seconds < 60) return `${seconds} s ago`
  const minutes = Math.round(seconds / 60)
  if (minutes < 60) return `${minutes} min ago`
  const hours = Math.round(minutes / 60)
  if (hours < 48) return `${hours} h ago`
  return `${Math.round(hours / 24)} days ago`
}

function itemLine(item: OutboxItem, now: number): string {
  const attempts = `${item.attempts} attempt${item.attempts === 1 ? '' : 's'}`
  const head = `#${String(item.seq).padEnd(5)} ${item.state.padEnd(8)} ${attempts.padEnd(11)} ${age(now - item.createdMs).padEnd(12)} ${item.summary}`
  if (item.lastError === null) return head
  const code = item.lastErrorCode === null ? '' : ` (${item.lastErrorCode})`
  return `${head}\n       last error${code}: ${item.lastError}`
}

function reportText(report: ReplayReport, items: readonly OutboxItem[]): string {
  const lines = [
    `Sent ${report.sent}, refused ${report.rejected}, ${report.pending} still waiting.`,
  ]
  for (const item of items.filter((i) => i.state === 'rejected')) {
    lines.push(
      `Refused #${item.seq} ${item.summary}: ${item.lastError ?? ''} (${item.lastErrorCode ?? 'no code'}). Fix what it says and \`atelier outbox retry ${item.seq}\`, or \`atelier outbox discard ${item.seq}\`.`,
    )
  }
  if (report.state !== 'ok' && report.message) lines.push(report.message)
  return lines.join('\n')
}

/** The entries a replay refused, as they stand now. */
function refusedIn(dbs: Databases, report: ReplayReport): OutboxItem[] {
  return report.entries
    .filter((entry) => entry.outcome === 'rejected')
    .map((entry) => dbs.ledger.outbox.get(entry.seq))
    .filter((entry) => entry !== null)
    .map(toItem)
}

function failIfNotClean(reports: readonly ReplayReport[]): void {
  const stopped = reports.find((report) => report.state !== 'ok')
  if (stopped) {
    throw new CliError(
      stopped.message ?? stopped.state,
      EXIT.failed,
      stopped.code ?? stopped.state.toUpperCase(),
    )
  }
  const refused = reports.reduce((sum, report) => sum + report.rejected, 0)
  if (refused > 0) {
    throw new CliError(
      `The service refused ${refused} write(s); they are kept in the outbox with the reason (\`atelier outbox --state rejected\`).`,
      EXIT.failed,
      'REJECTED',
    )
  }
}

/** `atelier outbox`: the profile's entries (or every entry, with no profile), at most 500. */
export async function listOutbox(
  context: CommandContext,
  flags: { state?: OutboxState },
): Promise<void> {
  const globals = context.globals()
  // Listing needs no key: only the profile's name, to show its own entries.
  let profileName: string | null
  try {
    profileName = globals.profile ?? (await readProfiles(globals.home)).current
  } catch (error) {
    if (!isSecretsError(error)) throw error
    throw new CliError(error.message, EXIT.failed, error.code)
  }
  const dbs = openDatabases(globals.home)
  try {
    const page = dbs.ledger.outbox.list({
      ...(profileName === null ? {} : { profile: profileName }),
      ...(flags.state ? { state: flags.state } : {}),
      limit: LIST_LIMIT,
    })
    const items = page.items.map(toItem)
    const now = Date.now()
    const which = flags.state ? `${flags.state} writes` : 'writes'
    const whose = profileName === null ? '' : ` for profile ${profileName}`
    const text =
      items.length === 0
        ? `No ${which} in the outbox${whose}.`
        : [
            ...items.map((item) => itemLine(item, now)),
            ...(page.next === null ? [] : [`(the first ${LIST_LIMIT} are shown)`]),
          ].join('\n')
    context.print(
      {
        profile: profileName,
        entries: items.map((item) => ({ ...item, ageMs: now - item.createdMs })),
        more: page.next !== null,
      },
      text,
    )
  } finally {
    dbs.close()
  }
}

/** `atelier outbox send`: every waiting write of the profile, organization by organization. */
export async function sendOutbox(context: CommandContext): Promise<void> {
  const connection = await connect(context, { command: 'outbox' })
  const dbs = openDatabases(context.globals().home)
  try {
    const scopes = dbs.ledger.outbox
      .pendingScopes()
      .filter((scope) => scope.profile === connection.profile.name)
    const reports: ReplayReport[] = []
    const refused: OutboxItem[] = []
    for (const scope of scopes) {
      const report = await replayScope(dbs, connection, scope.orgId)
      reports.push(report)
      refused.push(...refusedIn(dbs, report))
      if (report.state !== 'ok') break
    }
    const total: ReplayReport = {
      state: reports.find((r) => r.state !== 'ok')?.state ?? 'ok',
      sent: reports.reduce((sum, r) => sum + r.sent, 0),
      rejected: reports.reduce((sum, r) => sum + r.rejected, 0),
      pending: dbs.ledger.outbox
        .pendingScopes()
        .filter((scope) => scope.profile === connection.profile.name)
        .reduce((sum, scope) => sum + dbs.ledger.outbox.countPending(scope), 0),
      entries: reports.flatMap((r) => r.entries),
      elapsedMs: reports.reduce((sum, r) => sum + r.elapsedMs, 0),
    }
    const stopped = reports.find((r) => r.state !== 'ok')
    if (stopped?.message) total.message = stopped.message
    if (stopped?.code) total.code = stopped.code
    if (scopes.length === 0) {
      context.print(
        total,
        `Nothing to send: no writes wait for profile ${connection.profile.name}.`,
      )
      return
    }
    if (total.state === 'ok') context.print(total, reportText(total, refused))
    else context.io.stderr(`${reportText({ ...total, message: '' }, refused)}\n`)
    failIfNotClean(reports)
  } finally {
    dbs.close()
    connection.logger.close()
  }
}

/** `atelier outbox retry SEQ`: the refused entry back in its place, then a replay. */
export async function retryOutboxEntry(context: CommandContext, seq: number): Promise<void> {
  const connection = await connect(context, { command: 'outbox' })
  const dbs = openDatabases(context.globals().home)
  try {
    const entry = dbs.ledger.outbox.get(seq)
    if (entry && entry.profile !== connection.profile.name) {
      throw new CliError(
        `Outbox entry #${seq} belongs to profile ${entry.profile}; run the command with --profile ${entry.profile}.`,
        EXIT.usage,
        'OTHER_PROFILE',
      )
    }
    let item: OutboxItem
    try {
      item = retryRefused(dbs.ledger, seq)
    } catch (error) {
      throw cliError(error)
    }
    const report = await replayScope(dbs, connection, entry?.orgId ?? '')
    const now = dbs.ledger.outbox.get(seq)
    const after = now ? toItem(now) : item
    const text = reportText(report, refusedIn(dbs, report))
    if (after.state === 'sent') {
      context.print({ entry: after, replay: report }, text)
      return
    }
    if (after.state === 'rejected') {
      throw new CliError(
        `The service refused #${seq} again: ${after.lastError ?? ''}`,
        EXIT.failed,
        after.lastErrorCode ?? 'REJECTED',
      )
    }
    context.print({ entry: after, replay: report }, text)
    failIfNotClean([report])
  } finally {
    dbs.close()
    connection.logger.close()
  }
}

/** `atelier outbox discard SEQ`: a refused entry forgotten. */
export function discardOutboxEntry(context: CommandContext, seq: number): void {
  const dbs = openDatabases(context.globals().home)
  try {
    let item: OutboxItem
    try {
      item = discardRefused(dbs.ledger, seq)
    } catch (error) {
      throw cliError(error)
    }
    context.print(
      { discarded: item },
      `Discarded #${item.seq}: ${item.summary} (refused: ${item.lastError ?? 'no reason given'}).`,
    )
  } finally {
    dbs.close()
  }
}

/** `atelier feedback EVALUATION-ID`: the rating written to the outbox, then sent if it can be. */
export async function giveFeedback(
  context: CommandContext,
  evaluationId: string,
  rating: { isPositive: boolean | null; comment: string | null },
): Promise<void> {
  // Two attempts, not five: when the service is down the write is safe in the outbox, and
  // waiting out the whole backoff would only keep the user from the next thing.
  const connection = await connect(context, { command: 'feedback', attempts: 2 })
  const dbs = openDatabases(context.globals().home)
  try {
    // Offline, the evaluation's organization comes from the mirror when the profile names none.
    const orgId =
      connection.profile.organization_id ??
      dbs.mirror.evaluations.get(evaluationId)?.org_id ??
      (await organizationOf(connection.client, null))
    const replayer = new OutboxReplayer({
      client: connection.client,
      ledger: dbs.ledger,
      mirror: dbs.mirror,
      profileName: connection.profile.name,
      orgId,
    })
    let item: OutboxItem
    try {
      item = replayer.giveFeedback(evaluationId, rating)
    } catch (error) {
      throw cliError(error)
    }
    const report = await replayScope(dbs, connection, orgId)
    const stored = dbs.ledger.outbox.get(item.seq)
    const entry = stored ? toItem(stored) : item
    if (entry.state === 'rejected') {
      throw new CliError(
        `The service refused the feedback: ${entry.lastError ?? 'no reason given'} It is kept as outbox entry #${entry.seq}: fix what it says and \`atelier outbox retry ${entry.seq}\`, or \`atelier outbox discard ${entry.seq}\`.`,
        EXIT.failed,
        entry.lastErrorCode ?? 'REJECTED',
      )
    }
    const sent = entry.state === 'sent'
    const text = sent
      ? `Feedback sent: ${entry.summary}.`
      : `Feedback saved; it will be sent when the service is reachable (outbox entry #${entry.seq}, \`atelier outbox send\` sends it now).${report.message ? `\n${report.message}` : ''}`
    context.print({ status: sent ? 'sent' : 'saved', entry, replay: report }, text)
  } finally {
    dbs.close()
    connection.logger.close()
  }
}
