import { useState } from 'react'
import { useShallow } from 'zustand/react/shallow'
import { errorText } from '../shell/errorWords'
import { useAppStore } from '../store'
import { ConfirmDialog } from './ConfirmDialog'
import { bytesWords } from './form'

/** The built-in local service: where it runs, what it keeps, and a clean start. */
export function SandboxCard() {
  const { sandbox, setSandboxStatus, loadAccount, pushToast } = useAppStore(
    useShallow((s) => ({
      sandbox: s.settingsSandbox,
      setSandboxStatus: s.setSandboxStatus,
      loadAccount: s.loadAccount,
      pushToast: s.pushToast,
    })),
  )
  const [confirming, setConfirming] = useState(false)
  const [busy, setBusy] = useState<string | null>(null)
  const status = sandbox.value

  const act = async (what: 'start' | 'stop' | 'reset') => {
    const atelier = window.atelier
    if (!atelier) return
    setConfirming(false)
    setBusy(what)
    const result =
      what === 'reset'
        ? await atelier.sandbox.reset({ confirmed: true })
        : what === 'start'
          ? await atelier.sandbox.start()
          : await atelier.sandbox.stop()
    setBusy(null)
    if (result.ok) {
      setSandboxStatus(result.value)
      if (what === 'reset') {
        pushToast({ tone: 'success', title: 'The sandbox was reset', message: 'It starts empty.' })
        void loadAccount()
      }
    } else pushToast({ tone: 'error', title: 'The sandbox', message: errorText(result.error) })
  }

  return (
    <section className="card" aria-labelledby="settings-sandbox">
      <h2 id="settings-sandbox">Local sandbox</h2>
      {sandbox.problem ? <p className="field-problem">{sandbox.problem}</p> : null}
      {status ? (
        <dl className="settings-facts">
          <dt>State</dt>
          <dd data-testid="sandbox-state">
            {status.running
              ? `Running${status.inUse ? ', in use' : ''} at ${status.url ?? ''}`
              : status.inUse
                ? 'Stopped, so Atelier is offline'
                : 'Stopped'}
          </dd>
          <dt>Its data</dt>
          <dd>{bytesWords(status.dataBytes)}</dd>
        </dl>
      ) : null}
      {status?.inUse && status.running ? (
        <p className="settings-hint">
          Stopping it takes Atelier offline on purpose: what is on this computer stays browsable,
          and runs can start again once you start it.
        </p>
      ) : null}
      <div className="settings-actions">
        {status?.running ? (
          <button
            type="button"
            className="small-button"
            disabled={busy !== null}
            onClick={() => void act('stop')}
          >
            {busy === 'stop' ? 'Stopping…' : 'Stop'}
          </button>
        ) : (
          <button
            type="button"
            className="small-button"
            disabled={busy !== null}
            onClick={() => void act('start')}
          >
            {busy === 'start' ? 'Starting…' : 'Start'}
          </button>
        )}
        <button
          type="button"
          className="small-button danger"
          disabled={busy !== null}
          onClick={() => {
            setConfirming(true)
          }}
        >
          {busy === 'reset' ? 'Resetting…' : 'Reset…'}
        </button>
      </div>
      {confirming ? (
        <ConfirmDialog
          title="Reset the local sandbox?"
          message="Everything in it is deleted: its runs, evaluations, assets, webhooks and credit start again from nothing. Your profiles and their services are not touched."
          confirmLabel="Reset the sandbox"
          onCancel={() => {
            setConfirming(false)
          }}
          onConfirm={() => void act('reset')}
        />
      ) : null}
    </section>
  )
}
