import { randomInt } from 'node:crypto'
import {
  RUN_TERMINAL_STATUSES,
  type CallbackDeliveryStatusCode,
  type Run,
  type RunCallbackDelivery,
  type RunStatusCode,
} from '../../../src-shared/api'
import type {
  RerunStarted,
  RunDetail,
  RunLogPage,
  RunRefresh,
  SignatureCheck,
} from '../../../src-shared/domain/run-page'
import type { Databases } from '../../db'
import type { Logger } from '../../log'
import { isSecretsError, type Keychain } from '../../secrets'
import { isServiceError, type ServiceClient } from '../../service'
import { SyncEngine } from '../../sync'
import { logPage, readDetail, runNotFound, type RunScope } from './detail'
import { RunPageError } from './errors'
import { signatureMatches } from './signature'

/** Seeds run from 0 to 2^32 - 1, the range the service's seed inputs accept. */
const SEED_LIMIT = 2 ** 32

/** Deliveries the service still works on: their attempts are still to come. */
const OPEN_DELIVERY: readonly CallbackDeliveryStatusCode[] = ['pending', 'queued', 'processing']

/** The keychain account of a callback URL's secret; profile names cannot hold a colon. */
export function callbackSecretAccount(callbackUrl: string): string {
  return `callback-secret:${callbackUrl}`
}

export interface RunPageOptions {
  databases: Databases
  client: ServiceClient
  profile: string
  orgId: string
  /** Where remembered callback secrets live (never a file, never the mirror). */
  keychain: Keychain
  /** True while the sync finds the service unreachable: a refresh then does not wait on retries. */
  offline?: () => boolean
  /** Told when a call may have changed the balance (a re-run holds credit, a cancel refunds). */
  onBalanceChange?: () => void
  /**
   * Told after a run the service answered went into the mirror, for the other views to read it;
   * `started`: the app just made it (a re-run), so its end is still to come.
   */
  onRunWritten?: (run: Run, started: boolean) => void
  logger?: Logger
}

interface RunArgs {
  runId: string
}

/**
 * One run's page: read from the mirror at once (offline too), refreshed from the service when
 * the page asks, and the few things a person does there (cancel, re-run, redeliver, check a
 * signature). Every write the service answers goes into the mirror before the page sees it, so
 * the list and the page never disagree.
 */
export class RunPageService {
  private readonly scope: RunScope
  /** Only for `syncRunDetails`: the same fetch the background sync makes, page by page. */
  private readonly details: SyncEngine

  constructor(private readonly options: RunPageOptions) {
    this.scope = { profile: options.profile, orgId: options.orgId }
    this.details = new SyncEngine({
      client: options.client,
      mirror: options.databases.mirror,
      profileName: options.profile,
      orgId: options.orgId,
    })
  }

  get({ runId }: RunArgs): RunDetail {
    return readDetail(this.options.databases, this.scope, runId)
  }

  logs({ runId, after }: RunArgs & { after: string }): RunLogPage {
    this.get({ runId })
    try {
      return logPage(this.options.databases, runId, after)
    } catch (error) {
      // The mirror's cursor decoder throws a TypeError for a cursor of another list.
      if (!(error instanceof TypeError)) throw error
      throw new RunPageError(
        'LOG_CURSOR_INVALID',
        'That place in the log is not one this run gave. Open the run again to read its log from the start.',
      )
    }
  }

  /**
   * The run from the service, and its node runs, logs and deliveries when they are not yet
   * current: never fetched, fetched at another version of the run, the run unfinished (its log
   * grows), or a delivery still under way (only the callback list is read again then).
   */
  async refresh({ runId }: RunArgs): Promise<RunRefresh> {
    const { databases, client } = this.options
    const { mirror } = databases
    const held = mirror.runs.get(runId)
    if (this.options.offline?.() && held) {
      return this.notRefreshed(runId, {
        code: 'OFFLINE',
        message: 'The service cannot be reached; this is the run as it was last synced.',
      })
    }
    try {
      const run = await client.get('/v1/runs/{run_id}', { params: { path: { run_id: runId } } })
      if (run.org_id !== this.scope.orgId) throw runNotFound(runId)
      mirror.transaction(() => mirror.runs.upsertPage([run]))
      // A page polling an unfinished run: told only when the run moved.
      if (held?.updated_at !== run.updated_at || held.status_code !== run.status_code) {
        this.options.onRunWritten?.(run, false)
      }
      const fetched = mirror.runDetailsFetched.get(runId)
      const version = mirror.runDetailsFetched.runUpdatedMs(runId)
      const finished = isTerminal(run.status_code)
      if (!fetched || fetched.runUpdatedMs !== version || !finished) {
        await this.details.syncRunDetails(runId)
      } else if (mirror.callbackDeliveries.listForRun(runId).some(isOpen)) {
        await this.refreshDeliveries(runId)
      }
    } catch (error) {
      if (isServiceError(error) && error.status === 404) throw runNotFound(runId)
      // The page keeps showing what the mirror holds, and says why it is not newer.
      if (isServiceError(error) && held) {
        this.options.logger?.debug('a run could not be refreshed', { runId, code: error.code })
        return this.notRefreshed(runId, { code: error.code, message: error.message })
      }
      throw error
    }
    return { detail: this.get({ runId }), refreshed: true, problem: null }
  }

  async cancel({ runId }: RunArgs): Promise<RunDetail> {
    this.get({ runId })
    const run = await this.options.client.post('/v1/runs/{run_id}/cancel', {
      params: { path: { run_id: runId } },
    })
    const { mirror } = this.options.databases
    mirror.transaction(() => mirror.runs.upsertPage([run]))
    this.options.onRunWritten?.(run, false)
    this.options.onBalanceChange?.()
    return this.get({ runId })
  }

  /**
   * A new run of the same target and input, charged like any run. `same` (the default) has the
   * service copy the run: its input holds the seed Atelier drew and sent, so the same picture
   * comes back (the service charges again: it does not know this computer's cache; re-running the
   * flow in the editor is what serves an unchanged node free). `new` sends the same input with a
   * newly drawn seed to the run's model. The key comes from the page, made once per
   * confirmation, so a retry cannot charge twice.
   */
  async rerun({
    runId,
    idempotencyKey,
    seed = 'same',
  }: RunArgs & { idempotencyKey: string; seed?: 'same' | 'new' | undefined }) {
    const { run: original } = this.get({ runId })
    const run =
      seed === 'new'
        ? await this.withNewSeed(original, idempotencyKey)
        : await this.options.client.post('/v1/runs/{run_id}/rerun', {
            params: { path: { run_id: runId } },
            headers: { 'Idempotency-Key': idempotencyKey },
          })
    const { mirror } = this.options.databases
    mirror.transaction(() => mirror.runs.upsertPage([run]))
    this.options.onRunWritten?.(run, true)
    this.options.onBalanceChange?.()
    return { runId: run.id, estimatedCost: run.estimated_cost } satisfies RerunStarted
  }

  /** The run's input again with a new seed, as a new run of its model. */
  private async withNewSeed(original: Run, idempotencyKey: string): Promise<Run> {
    const [provider, model] = original.model_slug?.split('/') ?? []
    const seeded = original.model_id
      ? this.options.databases.mirror.models
          .inputs(this.scope, original.model_id)
          .some((input) => input.name === 'seed' && input.variable_type_code === 'seed')
      : false
    if (!provider || !model || !(typeof original.input.seed === 'number' || seeded)) {
      throw new RunPageError(
        'SEED_NOT_AVAILABLE',
        'This run takes no seed, so there is no new seed to draw. Re-run it with the same seed instead.',
      )
    }
    return this.options.client.post('/v1/models/{provider}/{model}/runs', {
      params: { path: { provider, model } },
      body: {
        input: { ...original.input, seed: randomInt(0, SEED_LIMIT) },
        ...(original.callback_url ? { callback_url: original.callback_url } : {}),
      },
      headers: { 'Idempotency-Key': idempotencyKey },
    })
  }

  /** The new delivery goes into the mirror at once; its attempts come with the next refresh. */
  async redeliver({ runId }: RunArgs): Promise<RunCallbackDelivery[]> {
    this.get({ runId })
    const delivery = await this.options.client.post('/v1/runs/{run_id}/callback-redeliveries', {
      params: { path: { run_id: runId } },
    })
    const { mirror } = this.options.databases
    mirror.transaction(() => mirror.callbackDeliveries.upsertPage([delivery]))
    return mirror.callbackDeliveries.listForRun(runId)
  }

  /**
   * Checks a signature a receiver got against the delivery's frozen bytes. The secret is either
   * pasted (and, when asked, remembered in the OS keychain under the callback URL) or the one
   * remembered; it is used here and dropped: never answered, logged or written elsewhere.
   */
  async verify(args: {
    runId: string
    deliveryId: string
    signature: string
    secret?: string | undefined
    remember?: boolean | undefined
  }): Promise<SignatureCheck> {
    const detail = this.get({ runId: args.runId })
    const delivery = detail.deliveries.find((d) => d.id === args.deliveryId)
    if (!delivery) {
      throw new RunPageError(
        'DELIVERY_NOT_FOUND',
        `Run ${args.runId} has no delivery ${args.deliveryId} on this computer. Refresh the run and try again.`,
      )
    }
    const account = callbackSecretAccount(delivery.callback_url)
    const { keychain } = this.options
    let secret = args.secret
    const secretFrom = secret === undefined ? 'keychain' : 'pasted'
    secret ??= (await this.keychainCall(() => keychain.get(account))) ?? undefined
    if (secret === undefined) {
      throw new RunPageError(
        'SECRET_NEEDED',
        `No callback secret is remembered for ${delivery.callback_url}. Paste the secret (shown once when it was created) to check the signature.`,
      )
    }
    const valid = signatureMatches(delivery.payload_bytes, secret, args.signature)
    const pasted = secret
    let remembered = false
    if (secretFrom === 'pasted' && args.remember === true) {
      await this.keychainCall(() => keychain.set(account, pasted))
      remembered = true
    }
    return { valid, secretFrom, remembered }
  }

  private async keychainCall<T>(work: () => Promise<T>): Promise<T> {
    try {
      return await work()
    } catch (error) {
      if (isSecretsError(error)) throw new RunPageError('KEYCHAIN_UNAVAILABLE', error.message)
      throw error
    }
  }

  private async refreshDeliveries(runId: string): Promise<void> {
    const deliveries = await this.options.client.get('/v1/runs/{run_id}/callback', {
      params: { path: { run_id: runId } },
    })
    const { mirror } = this.options.databases
    if (deliveries.length > 0) {
      mirror.transaction(() => mirror.callbackDeliveries.upsertPage(deliveries))
    }
  }

  private notRefreshed(runId: string, problem: RunRefresh['problem']): RunRefresh {
    return { detail: this.get({ runId }), refreshed: false, problem }
  }
}

function isTerminal(status: RunStatusCode): boolean {
  return (RUN_TERMINAL_STATUSES as readonly RunStatusCode[]).includes(status)
}

function isOpen(delivery: RunCallbackDelivery): boolean {
  return OPEN_DELIVERY.includes(delivery.status_code)
}
