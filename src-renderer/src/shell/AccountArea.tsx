import { useShallow } from 'zustand/react/shallow'
import type { AccountSummary } from '../../../src-shared/domain/app'
import { useAppStore } from '../store'

/** Micro-credits as the editor shows credits: "12.3457 credits", four decimals. */
export function balanceWords(micro: number): string {
  return `${(micro / 1_000_000).toFixed(4)} credits`
}

function organizationWords(account: AccountSummary): string {
  const organization = account.organization
  if (!organization) return 'No organization'
  return organization.name ?? `Organization ${organization.id.slice(0, 8)}`
}

/** Who Atelier works as, and what credit is left: under the sections, above the sync. */
export function AccountArea() {
  const { account, offline } = useAppStore(
    useShallow((s) => ({ account: s.account, offline: s.sync?.state === 'offline' })),
  )
  if (!account) return null
  const balance = account.balanceMicro
  return (
    <section className="account" aria-label="Account">
      <div className="account-organization" title={account.organization?.id}>
        {organizationWords(account)}
      </div>
      <div className="account-profile">
        {account.profileName === null
          ? 'No profile · local sandbox'
          : `Profile ${account.profileName}`}
      </div>
      <div
        className={balance === null ? 'account-balance unknown' : 'account-balance'}
        data-testid="balance"
        title={
          balance === null
            ? 'The balance is read from the service, which cannot be reached right now.'
            : account.backendKind === 'sandbox'
              ? 'Credit of the local sandbox: nothing here costs real money.'
              : 'Credit left in this organization.'
        }
      >
        {balance === null
          ? offline
            ? 'Balance unknown while offline'
            : 'Balance unknown'
          : balanceWords(balance)}
      </div>
    </section>
  )
}
