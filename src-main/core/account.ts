import type { AccountSummary } from '../../src-shared/domain/app'
import type { Logger } from '../log'
import { isServiceError, type ServiceClient } from '../service'
import type { Backend } from './backend'

/** How long a balance read from the service is shown before it is read again. */
export const BALANCE_TTL_MS = 30_000
/** Per attempt: the sidebar waits for this, so it gives up sooner than a sync. */
const ACCOUNT_TIMEOUT_MS = 10_000

export interface AccountReader {
  summary: () => Promise<AccountSummary>
  /** The next summary reads the balance again: a sync or a flow run may have changed it. */
  invalidate: () => void
  close: () => void
}

/**
 * The balance, kept briefly so that every window asking does not cost a request, and the
 * organization's name, asked once (it is not in the mirror). While the sync says offline the
 * service is not asked at all: the answer would only come after the client's retries.
 */
export function accountReader(options: {
  backend: Backend
  client: ServiceClient
  clock: () => number
  logger: Logger
  offline: () => boolean
}): AccountReader {
  const { backend, client, clock, logger } = options
  const orgId = backend.organizationId
  const closing = new AbortController()
  let organizationName: string | null = null
  // Set once the service answered the account call, name or not: it is not asked again.
  let accountAsked = false
  let cached: { balanceMicro: number | null; at: number } | null = null
  /** The read under way, for callers of the same generation to join. */
  let reading: { generation: number; balance: Promise<number | null> } | null = null
  let generation = 0

  const readBalance = async (): Promise<number | null> => {
    try {
      const balance = await client.get('/v1/billing/balance', {
        signal: closing.signal,
        timeoutMs: ACCOUNT_TIMEOUT_MS,
      })
      const value = Number(balance.balance)
      return Number.isFinite(value) ? Math.round(value * 1_000_000) : null
    } catch (error) {
      logger.debug('the balance could not be read', { err: error })
      return null
    }
  }

  const readName = async (): Promise<void> => {
    if (accountAsked) return
    try {
      const account = await client.get('/v1/account', {
        signal: closing.signal,
        timeoutMs: ACCOUNT_TIMEOUT_MS,
      })
      const mine = [account.organization, ...account.organizations].find((o) => o.id === orgId)
      organizationName = mine?.name ?? null
      accountAsked = true
    } catch (error) {
      // Unreachable: ask again next time. Any answer (a service without this call): leave it.
      if (isServiceError(error) && error.status !== 0) accountAsked = true
      logger.debug('the account could not be read', { err: error })
    }
  }

  const read = (): Promise<number | null> => {
    const started = generation
    const balance = Promise.all([readBalance(), readName()]).then(([balanceMicro]) => {
      // Invalidated while reading: this answer may predate what changed, so it is not kept.
      if (started === generation) cached = { balanceMicro, at: clock() }
      if (reading?.balance === balance) reading = null
      return balanceMicro
    })
    reading = { generation: started, balance }
    return balance
  }

  const summaryOf = (balanceMicro: number | null): AccountSummary => ({
    profileName: backend.info.kind === 'sandbox' ? null : backend.profile,
    organization: { id: orgId, name: organizationName },
    balanceMicro,
    backendKind: backend.info.kind,
  })

  return {
    summary: async () => {
      if (cached !== null && clock() - cached.at < BALANCE_TTL_MS) {
        return summaryOf(cached.balanceMicro)
      }
      if (options.offline() || closing.signal.aborted) return summaryOf(null)
      const balance = reading?.generation === generation ? reading.balance : read()
      return summaryOf(await balance)
    },
    invalidate: () => {
      generation++
      cached = null
    },
    close: () => {
      closing.abort()
    },
  }
}
