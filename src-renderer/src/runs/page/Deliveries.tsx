import { useState, type SyntheticEvent } from 'react'
import type { DeliveryAttempt, RunCallbackDelivery } from '../../../../src-shared/api'
import type { SignatureCheck } from '../../../../src-shared/domain/run-page'
import type { IpcError } from '../../../../src-shared/ipc/result'
import { codeWords } from '../../components/codeWords'
import { errorText } from '../../shell/errorWords'
import { dateWords, durationWords, timeWords } from './words'

const DELIVERY_WORDS: Record<RunCallbackDelivery['status_code'], string> = {
  pending: 'Pending',
  queued: 'Retrying',
  processing: 'Sending',
  succeeded: 'Delivered',
  failed: 'Failed',
  failed_non_retryable: 'Refused',
}

const FAILURE_WORDS: Record<string, string> = {
  dns_validation_failed: 'The callback address does not resolve to a usable host.',
  max_attempts_exhausted: 'Every attempt failed; the service gave up.',
  client_rejected: 'The receiver refused it (a 4xx answer), so it was not retried.',
}

function statusClass(delivery: RunCallbackDelivery): string {
  if (delivery.status_code === 'succeeded') return 'succeeded'
  if (delivery.status_code.startsWith('failed')) return 'failed'
  return 'running'
}

function Attempt({ attempt }: { attempt: DeliveryAttempt }) {
  const ok = attempt.status_code !== null && attempt.status_code < 300
  return (
    <li className="run-attempt">
      <div className="run-attempt-row">
        <span className="muted">#{attempt.attempt_number}</span>
        <span className={`run-http ${ok ? 'ok' : 'bad'}`}>
          {attempt.status_code ?? 'no answer'}
        </span>
        <span>{durationWords(attempt.response_time_ms)}</span>
        <span className="muted">{timeWords(attempt.created_at)}</span>
      </div>
      {attempt.error_message ? <p className="run-attempt-error">{attempt.error_message}</p> : null}
      {attempt.response_body ? (
        <details className="run-attempt-body">
          <summary>Response body</summary>
          <pre>{attempt.response_body}</pre>
        </details>
      ) : null}
    </li>
  )
}

function SignatureForm({
  onVerify,
}: {
  onVerify: (
    signature: string,
    secret: string,
    remember: boolean,
  ) => Promise<SignatureCheck | IpcError>
}) {
  const [signature, setSignature] = useState('')
  const [secret, setSecret] = useState('')
  const [remember, setRemember] = useState(false)
  const [busy, setBusy] = useState(false)
  const [outcome, setOutcome] = useState<SignatureCheck | IpcError | null>(null)
  const submit = async (event: SyntheticEvent) => {
    event.preventDefault()
    setBusy(true)
    const result = await onVerify(signature.trim(), secret, remember)
    setBusy(false)
    setOutcome(result)
    // The secret does not stay on screen (or in this component) once it was used.
    setSecret('')
  }
  return (
    <form className="run-signature" onSubmit={(event) => void submit(event)}>
      <label>
        <span>Service-Signature the receiver got</span>
        <input
          value={signature}
          spellCheck={false}
          placeholder="64 hex characters"
          onChange={(event) => {
            setSignature(event.target.value)
          }}
        />
      </label>
      <label>
        <span>Callback secret</span>
        <input
          type="password"
          value={secret}
          autoComplete="off"
          placeholder="Leave empty to use the remembered one"
          onChange={(event) => {
            setSecret(event.target.value)
          }}
        />
      </label>
      <div className="run-signature-actions">
        <label className="run-check">
          <input
            type="checkbox"
            checked={remember}
            disabled={secret === ''}
            onChange={(event) => {
              setRemember(event.target.checked)
            }}
          />
          Remember in the system keychain for this URL
        </label>
        <button type="submit" className="small-button" disabled={busy || signature.trim() === ''}>
          {busy ? 'Checking…' : 'Check signature'}
        </button>
      </div>
      {outcome === null ? null : 'valid' in outcome ? (
        <p className={`run-signature-result ${outcome.valid ? 'ok' : 'bad'}`} role="status">
          {outcome.valid
            ? `The signature is valid: these bytes were signed with this secret${outcome.secretFrom === 'keychain' ? ' (the remembered one)' : ''}.`
            : 'The signature does not match: another secret signed it, or the body was changed on the way.'}
          {outcome.remembered ? ' The secret is now remembered for this URL.' : ''}
        </p>
      ) : (
        <p className="run-signature-result bad" role="alert">
          {errorText(outcome)}
        </p>
      )}
    </form>
  )
}

function Delivery({
  delivery,
  index,
  onVerify,
}: {
  delivery: RunCallbackDelivery
  index: number
  onVerify: (
    deliveryId: string,
    signature: string,
    secret: string,
    remember: boolean,
  ) => Promise<SignatureCheck | IpcError>
}) {
  const [open, setOpen] = useState(index === 0)
  const [checking, setChecking] = useState(false)
  return (
    <li className={`run-delivery ${open ? 'open' : ''}`}>
      <button
        type="button"
        className="run-delivery-row"
        aria-expanded={open}
        onClick={() => {
          setOpen(!open)
        }}
      >
        <span className={`run-chip small ${statusClass(delivery)}`}>
          {codeWords(DELIVERY_WORDS, delivery.status_code)}
        </span>
        <span>{delivery.is_automatic ? 'Callback' : 'Redelivery'}</span>
        <span className="muted">{dateWords(delivery.created_at)}</span>
        <span className="muted run-delivery-count">
          {delivery.attempts.length} of {delivery.max_attempts} attempts
        </span>
      </button>
      {open ? (
        <div className="run-delivery-detail">
          <p className="run-delivery-url" title={delivery.callback_url}>
            POST {delivery.callback_url}
          </p>
          {delivery.failure_reason_code ? (
            <p className="run-attempt-error">
              {FAILURE_WORDS[delivery.failure_reason_code] ?? delivery.failure_reason_code}{' '}
              {delivery.failure_detail ?? ''}
            </p>
          ) : null}
          {delivery.attempts.length === 0 ? (
            <p className="muted">
              No attempt yet
              {delivery.next_attempt_at ? `; next at ${timeWords(delivery.next_attempt_at)}` : ''}.
            </p>
          ) : (
            <ol className="run-attempts" aria-label="Attempts">
              {delivery.attempts.map((attempt) => (
                <Attempt key={attempt.id} attempt={attempt} />
              ))}
            </ol>
          )}
          <details className="run-attempt-body">
            <summary>Payload sent</summary>
            <pre>{delivery.payload_bytes}</pre>
          </details>
          {checking ? (
            <SignatureForm
              onVerify={(signature, secret, remember) =>
                onVerify(delivery.id, signature, secret, remember)
              }
            />
          ) : (
            <button
              type="button"
              className="link-button"
              onClick={() => {
                setChecking(true)
              }}
            >
              Check a signature…
            </button>
          )}
        </div>
      ) : null}
    </li>
  )
}

/** The run's callback deliveries with every attempt, newest first, and Redeliver. */
export function Deliveries(props: {
  deliveries: RunCallbackDelivery[]
  callbackUrl: string | null
  finished: boolean
  onRedeliver: () => Promise<void>
  onVerify: (
    deliveryId: string,
    signature: string,
    secret: string,
    remember: boolean,
  ) => Promise<SignatureCheck | IpcError>
}) {
  const { deliveries, callbackUrl, finished, onRedeliver, onVerify } = props
  const [sending, setSending] = useState(false)
  const newestFirst = [...deliveries].reverse()
  const why =
    callbackUrl === null
      ? 'This run was started without a callback URL.'
      : !finished
        ? 'The callback is sent once the run has finished.'
        : null
  return (
    <section className="card run-card" aria-labelledby="run-deliveries-title">
      <div className="card-head">
        <h2 id="run-deliveries-title">Callback deliveries</h2>
        <button
          type="button"
          className="small-button"
          disabled={why !== null || sending}
          title={why ?? 'Send the same signed payload to the callback URL again'}
          onClick={() => {
            setSending(true)
            void onRedeliver().finally(() => {
              setSending(false)
            })
          }}
        >
          {sending ? 'Sending…' : 'Redeliver'}
        </button>
      </div>
      {deliveries.length === 0 ? (
        <p className="muted run-empty">{why ?? 'No delivery on this computer yet.'}</p>
      ) : (
        <ul className="run-deliveries">
          {newestFirst.map((delivery, index) => (
            <Delivery key={delivery.id} delivery={delivery} index={index} onVerify={onVerify} />
          ))}
        </ul>
      )}
    </section>
  )
}
