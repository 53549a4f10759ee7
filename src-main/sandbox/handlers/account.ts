import { formatCredits } from '../accounts'
import { listOf } from './common'
import type { Handlers } from './types'

export const accountHandlers: Handlers = {
  getBalance: ({ auth, sandbox }) => {
    const org = sandbox.accounts.balance(auth.orgId)
    return {
      org_id: org.id,
      balance: formatCredits(org.balance_micro),
      currency_code: org.currency_code,
      updated_at: org.updated_at,
    }
  },

  getAccount: ({ auth, sandbox }) => {
    const summary = (id: string) => {
      const org = sandbox.accounts.balance(id)
      return { id: org.id, name: org.name }
    }
    return {
      key_id: auth.keyId,
      user: null,
      organization: summary(auth.orgId),
      organizations: auth.orgIds.map(summary),
      scopes: [...auth.scopes].sort(),
    }
  },

  listTombstones: listOf({
    collection: 'tombstones',
    schema: 'Tombstone',
    defaultSort: 'deleted_at:asc',
  }),

  getHealth: () => ({ status: 'ok' as const }),

  getReadiness: ({ sandbox }) => {
    const started = sandbox.clock()
    sandbox.db.prepare('SELECT 1').get()
    return {
      status: 'ready' as const,
      components: {
        database: {
          status: 'ready' as const,
          detail: `answered in ${sandbox.clock() - started} ms`,
        },
        storage: { status: 'ready' as const, detail: 'local blob store' },
      },
    }
  },
}
