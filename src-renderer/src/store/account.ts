import type { AccountSummary } from '../../../src-shared/domain/app'
import type { AtelierApi } from '../../../src-shared/ipc/api'
import { errorText } from '../shell/errorWords'
import type { SliceWithApi } from './api'

export interface AccountSlice {
  /**
   * The profile, organization and balance as main last said; null until it has. The one balance
   * every view shows (the sidebar, the editor beside its estimate), so they never disagree.
   */
  account: AccountSummary | null
  /** Why it could not be had, in plain words (the local data is still opening…). */
  accountProblem: string | null
  /**
   * Asks main again; answers overtaken by a later ask are dropped. Main keeps the balance
   * briefly, so asking often costs no request. From the first ask on, the balance main reads
   * again after each charge (`account.changed`) is taken as it comes.
   */
  loadAccount: () => Promise<void>
}

export const createAccountSlice: SliceWithApi<AccountSlice> = (atelier) => (set) => {
  let asked = 0
  /** The bridge whose `account.changed` is heard: once each, however often the account is asked. */
  let heard: AtelierApi | null = null
  const hear = (api: AtelierApi) => {
    if (heard === api) return
    heard = api
    api.on('account.changed', (summary) => {
      // Newer than any answer still on its way.
      asked++
      set({ account: summary, accountProblem: null })
    })
  }
  return {
    account: null,
    accountProblem: null,
    loadAccount: async () => {
      const api = atelier()
      if (!api) return
      hear(api)
      const ask = ++asked
      const result = await api.account.summary()
      if (ask !== asked) return
      if (result.ok) set({ account: result.value, accountProblem: null })
      else set({ accountProblem: errorText(result.error) })
    },
  }
}
