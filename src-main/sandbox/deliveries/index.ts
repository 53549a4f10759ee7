/**
 * Callbacks and webhooks: when a run or a batch finishes, its `callback_url` and every active
 * organization webhook subscribed to the event receive one signed POST of the frozen payload,
 * retried until it is taken or the attempts run out. Choices the contract leaves open:
 *
 * - Events: a run's terminal status names it (succeeded → run.completed, failed → run.failed,
 *   canceled → run.cancelled). A batch whose items all succeeded sends batch.succeeded; every
 *   other finished batch (failed or canceled items, a failed or canceled batch) sends
 *   run.partial_succeeded, the only other batch event; its `status` and counts tell them apart.
 * - Signing: HMAC-SHA256 of the exact body bytes, lowercase hex in `Service-Signature`. Run and
 *   batch callbacks use the dispatch's `callback_secret_id` (kept on the run or batch record by
 *   the run engine) while it exists, else the organization's newest callback secret; an
 *   organization without any gets a sandbox-made default secret whose value is never shown, so
 *   deliveries are still signed and `signing_secret_id` names it. Webhooks sign with their own
 *   `secret_ciphertext`, taken as the key itself.
 * - Headers: `Service-Request-Id` is the id of the attempt record (fresh per attempt, so a
 *   receiver's log joins the delivery history by it); `Service-Delivery-Id` carries the delivery
 *   id receivers are asked to be idempotent on.
 * - States: pending (created, nothing tried) → processing (an attempt in flight) → succeeded; a
 *   failed attempt with attempts left → queued until `next_attempt_at`. 2xx succeeds. A 4xx other
 *   than 408 and 429 ends in failed_non_retryable / client_rejected. A host that does not resolve,
 *   resolves only to unusable addresses or is not http(s) ends in failed_non_retryable /
 *   dns_validation_failed without an attempt. Anything else (5xx, 408, 429, 3xx, timeouts,
 *   refused or reset connections) is retried after 1 s, 2 s, 4 s, 8 s; after 5 attempts the
 *   delivery is failed / max_attempts_exhausted. `failure_reason_code` and `failure_detail` are
 *   set once a delivery has failed for good. Timings: `/_sandbox/delivery-settings`.
 * - A run's or batch's callback history lists its deliveries oldest first (the automatic one,
 *   then redeliveries).
 * - Redelivery answers 202 with a new delivery (is_automatic false) carrying the very bytes of
 *   the run's first callback; 409 while the run is not terminal or when it has no callback_url.
 * - Deleting a webhook deletes its deliveries and attempts too, and stops their retries.
 */
import type { SandboxArea } from '../handlers/types'
import type { SandboxServices } from '../services'
import { callbackHandlers } from './callback-handlers'
import { DeliveryEngine, type DeliveryKind } from './engine'
import { DeliveryQueries } from './queries'
import {
  COLLECTIONS,
  type BatchCallbackDelivery,
  type DeliveryCollection,
  type RunCallbackDelivery,
  type Webhook,
  type WebhookDelivery,
} from './records'
import { Secrets } from './secrets'
import { deliverySettingsRoute } from './settings-route'
import { DeliveryTriggers } from './triggers'
import { webhookHandlers } from './webhook-handlers'

export function createDeliveriesArea(services: SandboxServices): SandboxArea {
  const { store, events } = services
  const queries = new DeliveryQueries(services.store)
  const secrets = new Secrets(store, queries)

  const callbackKind: DeliveryKind = {
    webhook: false,
    target: (orgId, delivery) => {
      const { callback_url, signing_secret_id } = delivery as
        RunCallbackDelivery | BatchCallbackDelivery
      const key = secrets.material(orgId, signing_secret_id)
      return key
        ? { url: callback_url, key }
        : { gone: `The callback secret ${signing_secret_id} that signs this delivery is gone.` }
    },
  }
  const kinds: Record<DeliveryCollection, DeliveryKind> = {
    [COLLECTIONS.runCallbacks]: callbackKind,
    [COLLECTIONS.batchCallbacks]: callbackKind,
    [COLLECTIONS.webhookDeliveries]: {
      webhook: true,
      target: (orgId, delivery) => {
        const { webhook_id } = delivery as unknown as WebhookDelivery
        const webhook = store.get<Webhook>(COLLECTIONS.webhooks, webhook_id, orgId)
        const key = webhook && secrets.material(orgId, webhook.id)
        return webhook && key
          ? { url: webhook.url, key }
          : { gone: `The webhook ${webhook_id} was deleted before this delivery was made.` }
      },
    },
  }

  const engine = new DeliveryEngine(services, queries, kinds)
  const triggers = new DeliveryTriggers(services, queries, secrets, engine)

  // Emitters must not be hurt by a delivery problem: one is logged, never thrown back.
  const guard =
    <A extends unknown[]>(fn: (...args: A) => void) =>
    (...args: A) => {
      try {
        fn(...args)
      } catch (error) {
        console.error('sandbox: could not create the deliveries of an event', error)
      }
    }
  const onRun = guard(triggers.onRunFinished.bind(triggers))
  const onBatch = guard(triggers.onBatchFinished.bind(triggers))
  events.on('run.finished', onRun)
  events.on('batch.finished', onBatch)
  engine.resume()

  return {
    handlers: {
      ...callbackHandlers({ queries, secrets, triggers }),
      ...webhookHandlers({ queries, secrets, engine }),
    },
    routes: deliverySettingsRoute(services, engine),
    stop: async () => {
      events.off('run.finished', onRun)
      events.off('batch.finished', onBatch)
      await engine.stop()
    },
  }
}
