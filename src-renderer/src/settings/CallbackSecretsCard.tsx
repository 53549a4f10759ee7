import { useState } from 'react'
import { useShallow } from 'zustand/react/shallow'
import {
  callbackSecretCreateSchema,
  type CallbackSecretItem,
  type CreatedCallbackSecret,
} from '../../../src-shared/domain/settings'
import { errorText } from '../shell/errorWords'
import { Modal } from '../shell/Modal'
import { useAppStore } from '../store'
import { ConfirmDialog } from './ConfirmDialog'
import { Field, ipcProblems, problemsOf, type FieldProblems } from './form'
import { SecretOnce } from './SecretOnce'

const madeAt = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short' })

function madeWords(iso: string): string {
  const date = new Date(iso)
  return Number.isNaN(date.getTime()) ? iso : madeAt.format(date)
}

/** The plain secret, this once: the service shows only its last four characters from then on. */
function SecretDialog({
  created,
  onClose,
}: {
  created: CreatedCallbackSecret
  onClose: () => void
}) {
  return (
    <Modal
      label="The new callback secret"
      className="dialog wide settings-dialog"
      onClose={onClose}
    >
      <h2>Callback secret created</h2>
      <p>
        Callbacks signed with <strong>{created.callbackSecret.label}</strong> are checked with this
        secret. Copy it now into the service that receives them:{' '}
        <strong>it will not be shown again.</strong>
      </p>
      <SecretOnce secret={created.secret} testId="callback-secret" />
      <div className="dialog-actions">
        <button type="button" className="small-button" onClick={onClose}>
          Done
        </button>
      </div>
    </Modal>
  )
}

/**
 * The organization's callback secrets. The service makes them (online only) but cannot list or
 * delete them, so the list is the one main keeps of those made in Atelier, and "Remove" takes
 * one off it; the confirm says that the service keeps the secret.
 */
export function CallbackSecretsCard() {
  const { secrets, loadSecrets, pushToast } = useAppStore(
    useShallow((s) => ({
      secrets: s.settingsCallbackSecrets,
      loadSecrets: s.loadCallbackSecrets,
      pushToast: s.pushToast,
    })),
  )
  const [label, setLabel] = useState('')
  const [problems, setProblems] = useState<FieldProblems>({})
  const [creating, setCreating] = useState(false)
  const [created, setCreated] = useState<CreatedCallbackSecret | null>(null)
  const [removing, setRemoving] = useState<CallbackSecretItem | null>(null)

  const create = async () => {
    const input = { label }
    const parsed = callbackSecretCreateSchema.safeParse(input)
    if (!parsed.success) {
      setProblems(problemsOf(parsed.error.issues))
      return
    }
    const atelier = window.atelier
    if (!atelier) return
    setCreating(true)
    const result = await atelier.callbackSecrets.create(parsed.data)
    setCreating(false)
    if (result.ok) {
      setCreated(result.value)
      setLabel('')
      void loadSecrets()
    } else {
      const placed = ipcProblems(result.error)
      setProblems(placed)
      if (Object.keys(placed).length === 0) {
        pushToast({
          tone: 'error',
          title: 'Callback secret not created',
          message: errorText(result.error),
        })
      }
    }
  }

  const remove = async (secret: CallbackSecretItem) => {
    setRemoving(null)
    const atelier = window.atelier
    if (!atelier) return
    const result = await atelier.callbackSecrets.remove({ id: secret.id })
    if (result.ok) void loadSecrets()
    else
      pushToast({
        tone: 'error',
        title: 'Callback secret not removed',
        message: errorText(result.error),
      })
  }

  return (
    <section className="card" aria-labelledby="settings-callback-secrets">
      <div className="card-head">
        <h2 id="settings-callback-secrets">Callback secrets</h2>
        <button type="button" className="small-button" onClick={() => void loadSecrets()}>
          Refresh
        </button>
      </div>
      <p className="muted">
        The service signs each run&apos;s callback with one of these, so that the receiving service
        can tell the call is genuine. The service shows a secret only when it is made: listed here
        are the ones made in Atelier on this computer.
      </p>
      {secrets.problem ? (
        <p className="field-problem" role="alert">
          {secrets.problem}
        </p>
      ) : null}
      {secrets.value?.length === 0 ? (
        <p className="muted">No callback secrets made here yet.</p>
      ) : null}
      {secrets.value && secrets.value.length > 0 ? (
        <ul className="settings-list" aria-label="Callback secrets">
          {secrets.value.map((secret) => (
            <li key={secret.id}>
              <div className="settings-row-text">
                <strong>{secret.label}</strong>
                <span className="muted">
                  secret …{secret.fingerprint} · made{' '}
                  <time dateTime={secret.createdAt}>{madeWords(secret.createdAt)}</time>
                </span>
              </div>
              <button
                type="button"
                className="small-button danger"
                aria-label={`Remove callback secret ${secret.label}`}
                onClick={() => {
                  setRemoving(secret)
                }}
              >
                Remove
              </button>
            </li>
          ))}
        </ul>
      ) : null}
      <form
        className="settings-subform"
        noValidate
        onSubmit={(event) => {
          event.preventDefault()
          void create()
        }}
      >
        <Field label="New callback secret name" problem={problems.label}>
          {(props) => (
            <input
              {...props}
              type="text"
              placeholder="Render farm receiver"
              value={label}
              onChange={(event) => {
                setLabel(event.target.value)
                setProblems(({ label: _gone, ...rest }) => rest)
              }}
            />
          )}
        </Field>
        <div>
          <button type="submit" className="primary-button" disabled={creating}>
            {creating ? 'Creating…' : 'Create callback secret'}
          </button>
        </div>
      </form>
      {created ? (
        <SecretDialog
          created={created}
          onClose={() => {
            setCreated(null)
          }}
        />
      ) : null}
      {removing ? (
        <ConfirmDialog
          title="Remove this callback secret?"
          message={`Atelier takes ${removing.label} (secret …${removing.fingerprint}) off this list. The service has no way to delete or revoke a callback secret, so it keeps it: runs that name it are still signed with it.`}
          confirmLabel="Remove secret"
          onCancel={() => {
            setRemoving(null)
          }}
          onConfirm={() => void remove(removing)}
        />
      ) : null}
    </section>
  )
}
