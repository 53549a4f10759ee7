import type { AccountSummary } from '../../../src-shared/domain/app'
import { errorText } from '../shell/errorWords'
import type { SliceWithApi } from './api'

export interface AccountSlice {
  /** The profile, organization and balance as main last said; null until it has. */
  account: AccountSummary | null
  /** Why it could not be had, in plain words (the local data is still opening…). */
  accountProblem: string | null
  /**
   * Asks main again; answers overtaken by a later ask are dropped. Main keeps the balance
   * briefly, so asking often costs no request.
   */
  loadAccount: () => Promise<void>
}

export const createAccountSlice: SliceWithApi<AccountSlice> = (atelier) => (set) => {
  let asked = 0
  return {
    account: null,
    accountProblem: null,
    loadAccount: async () => {
      const api = atelier()
      if (!api) return
      const ask = ++asked
      const result = await api.account.summary()
      if (ask !== asked) return
      if (result.ok) set({ account: result.value, accountProblem: null })
      else set({ accountProblem: errorText(result.error) })
    },
  }
}
