import { useState } from 'react'
import { useShallow } from 'zustand/react/shallow'
import {
  WEBHOOK_EVENTS,
  webhookCreateSchema,
  type CreatedWebhook,
  type WebhookEvent,
  type WebhookItem,
} from '../../../src-shared/domain/settings'
import { errorText } from '../shell/errorWords'
import { Modal } from '../shell/Modal'
import { useAppStore } from '../store'
import { ConfirmDialog } from './ConfirmDialog'
import { Field, ipcProblems, problemsOf, type FieldProblems } from './form'
import { SecretOnce } from './SecretOnce'

const EVENT_WORDS: Record<WebhookEvent, string> = {
  'run.completed': 'Run completed',
  'run.failed': 'Run failed',
  'run.cancelled': 'Run canceled',
  'run.partial_succeeded': 'Run partly succeeded',
  'batch.succeeded': 'Batch succeeded',
}

/** The signing secret, this once: the service keeps only its last four characters. */
function SecretDialog({ created, onClose }: { created: CreatedWebhook; onClose: () => void }) {
  return (
    <Modal
      label="The webhook's signing secret"
      className="dialog wide settings-dialog"
      onClose={onClose}
    >
      <h2>Webhook created</h2>
      <p>
        Events go to <strong>{created.webhook.url}</strong>, signed with this secret. Copy it now
        into the receiving service: <strong>it will not be shown again.</strong>
      </p>
      <SecretOnce secret={created.secret} testId="webhook-secret" />
      <div className="dialog-actions">
        <button type="button" className="small-button" onClick={onClose}>
          Done
        </button>
      </div>
    </Modal>
  )
}

/** Organization webhooks, on the service (online only). */
export function WebhooksCard() {
  const { webhooks, loadWebhooks, pushToast } = useAppStore(
    useShallow((s) => ({
      webhooks: s.settingsWebhooks,
      loadWebhooks: s.loadWebhooks,
      pushToast: s.pushToast,
    })),
  )
  const [url, setUrl] = useState('')
  const [events, setEvents] = useState<WebhookEvent[]>(['run.completed', 'run.failed'])
  const [problems, setProblems] = useState<FieldProblems>({})
  const [creating, setCreating] = useState(false)
  const [created, setCreated] = useState<CreatedWebhook | null>(null)
  const [deleting, setDeleting] = useState<WebhookItem | null>(null)

  const create = async () => {
    const input = { url: url.trim(), events }
    const parsed = webhookCreateSchema.safeParse(input)
    if (!parsed.success) {
      setProblems(problemsOf(parsed.error.issues))
      return
    }
    const atelier = window.atelier
    if (!atelier) return
    setCreating(true)
    const result = await atelier.webhooks.create(input)
    setCreating(false)
    if (result.ok) {
      setCreated(result.value)
      setUrl('')
      void loadWebhooks()
    } else {
      const placed = ipcProblems(result.error)
      setProblems(placed)
      if (Object.keys(placed).length === 0) {
        pushToast({ tone: 'error', title: 'Webhook not created', message: errorText(result.error) })
      }
    }
  }

  const remove = async (webhook: WebhookItem) => {
    setDeleting(null)
    const atelier = window.atelier
    if (!atelier) return
    const result = await atelier.webhooks.delete({ id: webhook.id })
    if (result.ok) void loadWebhooks()
    else
      pushToast({ tone: 'error', title: 'Webhook not deleted', message: errorText(result.error) })
  }

  return (
    <section className="card" aria-labelledby="settings-webhooks">
      <div className="card-head">
        <h2 id="settings-webhooks">Webhooks</h2>
        <button type="button" className="small-button" onClick={() => void loadWebhooks()}>
          Refresh
        </button>
      </div>
      <p className="muted">
        The service posts your organization&apos;s run events to these addresses, signed with a
        secret.
      </p>
      {webhooks.problem ? (
        <p className="field-problem" role="alert">
          {webhooks.problem}
        </p>
      ) : null}
      {webhooks.value?.length === 0 ? <p className="muted">No webhooks yet.</p> : null}
      {webhooks.value && webhooks.value.length > 0 ? (
        <ul className="settings-list" aria-label="Webhooks">
          {webhooks.value.map((webhook) => (
            <li key={webhook.id}>
              <div className="settings-row-text">
                <strong className="settings-url">{webhook.url}</strong>
                <span className="muted">
                  {webhook.events.join(', ') || 'No events'} · secret …{webhook.fingerprint}
                  {webhook.active ? '' : ' · paused'}
                </span>
              </div>
              <button
                type="button"
                className="small-button danger"
                aria-label={`Delete webhook ${webhook.url}`}
                onClick={() => {
                  setDeleting(webhook)
                }}
              >
                Delete
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
        <Field label="New webhook address" problem={problems.url}>
          {(props) => (
            <input
              {...props}
              type="url"
              placeholder="https://hooks.example.com/atelier"
              value={url}
              onChange={(event) => {
                setUrl(event.target.value)
                setProblems(({ url: _gone, ...rest }) => rest)
              }}
            />
          )}
        </Field>
        <fieldset className="settings-checks" aria-label="Events">
          <legend>Events</legend>
          {WEBHOOK_EVENTS.map((code) => (
            <label key={code} className="check-field">
              <input
                type="checkbox"
                checked={events.includes(code)}
                onChange={(event) => {
                  const on = event.target.checked
                  setEvents((now) => (on ? [...now, code] : now.filter((e) => e !== code)))
                  setProblems(({ events: _gone, ...rest }) => rest)
                }}
              />
              {EVENT_WORDS[code]}
            </label>
          ))}
        </fieldset>
        {problems.events ? (
          <p className="field-problem" role="alert">
            {problems.events}
          </p>
        ) : null}
        <div>
          <button type="submit" className="primary-button" disabled={creating}>
            {creating ? 'Creating…' : 'Create webhook'}
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
      {deleting ? (
        <ConfirmDialog
          title="Delete this webhook?"
          message={`The service stops sending events to ${deleting.url}. Its secret cannot be recovered.`}
          confirmLabel="Delete webhook"
          onCancel={() => {
            setDeleting(null)
          }}
          onConfirm={() => void remove(deleting)}
        />
      ) : null}
    </section>
  )
}
