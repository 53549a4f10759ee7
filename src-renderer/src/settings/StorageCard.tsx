import { useState } from 'react'
import { useShallow } from 'zustand/react/shallow'
import { balanceWords } from '../shell/AccountArea'
import { errorText } from '../shell/errorWords'
import { useAppStore } from '../store'
import { ConfirmDialog } from './ConfirmDialog'
import { bytesWords } from './form'

/** What the local data takes, the mirror's rebuild, and the credit left. */
export function StorageCard() {
  const { storage, rebuilding, setRebuilding, sync, loadSettings, pushToast } = useAppStore(
    useShallow((s) => ({
      storage: s.settingsStorage,
      rebuilding: s.mirrorRebuilding,
      setRebuilding: s.setMirrorRebuilding,
      sync: s.sync,
      loadSettings: s.loadSettings,
      pushToast: s.pushToast,
    })),
  )
  const [confirming, setConfirming] = useState(false)
  const figures = storage.value
  const progress = rebuilding ? sync?.progress : null
  const share =
    figures && figures.mediaCapBytes > 0 ? figures.mediaBytes / figures.mediaCapBytes : 0

  const rebuild = async () => {
    setConfirming(false)
    const atelier = window.atelier
    if (!atelier) return
    setRebuilding(true)
    const result = await atelier.settings.rebuildMirror({ confirmed: true })
    setRebuilding(false)
    if (result.ok) {
      pushToast({
        tone: 'success',
        title: 'The mirror was rebuilt',
        message: 'Everything was synced again.',
      })
      void loadSettings()
    } else pushToast({ tone: 'error', title: 'Rebuild', message: errorText(result.error) })
  }

  return (
    <section className="card" aria-labelledby="settings-storage">
      <h2 id="settings-storage">Storage</h2>
      {storage.problem ? <p className="field-problem">{storage.problem}</p> : null}
      {figures ? (
        <dl className="settings-facts">
          <dt>Mirror</dt>
          <dd>{bytesWords(figures.mirrorBytes)}</dd>
          <dt>Outputs</dt>
          <dd>
            {bytesWords(figures.mediaBytes)} of {bytesWords(figures.mediaCapBytes)}
            <span className="settings-meter" aria-hidden="true">
              <span style={{ width: `${String(Math.min(100, share * 100))}%` }} />
            </span>
          </dd>
          <dt>Ledger</dt>
          <dd>{bytesWords(figures.ledgerBytes)}</dd>
          <dt>Sandbox</dt>
          <dd>{bytesWords(figures.sandboxBytes)}</dd>
        </dl>
      ) : null}
      {rebuilding ? (
        <div className="settings-progress" role="status">
          <span>
            Rebuilding the mirror
            {progress
              ? `: ${progress.collection}, step ${String(progress.step)} of ${String(progress.steps)}`
              : '…'}
          </span>
          <span className="sync-bar indeterminate">
            <span />
          </span>
        </div>
      ) : null}
      <div className="settings-actions">
        <button
          type="button"
          className="small-button"
          disabled={rebuilding}
          onClick={() => {
            setConfirming(true)
          }}
        >
          Rebuild mirror…
        </button>
      </div>
      {confirming ? (
        <ConfirmDialog
          title="Rebuild the mirror?"
          message="The local copy of your runs, evaluations and assets is deleted and downloaded again from the service. Changes not sent yet are kept. Offline, nothing can be downloaded until the service is back."
          confirmLabel="Rebuild"
          onCancel={() => {
            setConfirming(false)
          }}
          onConfirm={() => void rebuild()}
        />
      ) : null}
    </section>
  )
}

/** The credit left, read from the service on demand. */
export function BalanceCard() {
  const { account, loadAccount } = useAppStore(
    useShallow((s) => ({ account: s.account, loadAccount: s.loadAccount })),
  )
  const [refreshing, setRefreshing] = useState(false)
  const balance = account?.balanceMicro ?? null
  return (
    <section className="card" aria-labelledby="settings-balance">
      <div className="card-head">
        <h2 id="settings-balance">Balance</h2>
        <button
          type="button"
          className="small-button"
          disabled={refreshing}
          onClick={() => {
            setRefreshing(true)
            void loadAccount().finally(() => {
              setRefreshing(false)
            })
          }}
        >
          {refreshing ? 'Refreshing…' : 'Refresh'}
        </button>
      </div>
      <p className="settings-balance" data-testid="settings-balance">
        {balance === null ? 'Unknown: the service cannot be reached' : balanceWords(balance)}
      </p>
      <p className="muted">
        {account?.organization?.name ?? account?.organization?.id ?? ''}
        {account?.backendKind === 'sandbox' ? ' · sandbox credit, not real money' : ''}
      </p>
    </section>
  )
}
