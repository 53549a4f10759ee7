import { presentRun } from '../runs'
import type { SandboxServices } from '../services'
import type { DeliveryEngine } from './engine'
import { batchPayload, freeze, runPayload } from './payloads'
import type { DeliveryQueries } from './queries'
import {
  COLLECTIONS,
  namedSecretId,
  type Batch,
  type BatchCallbackDelivery,
  type BatchCallbackPayload,
  type EventType,
  type Run,
  type RunCallbackDelivery,
  type RunCallbackPayload,
  type SecretNaming,
  type Webhook,
  type WebhookDelivery,
} from './records'
import type { Secrets } from './secrets'

export interface Frozen<P> {
  bytes: string
  payload: P
}

/**
 * Turns finished runs and batches into deliveries: the per-run (or per-batch) callback when a
 * `callback_url` was given, and one delivery per active organization webhook subscribed to the
 * event. The payload is frozen once per event, so every receiver gets the very same bytes.
 */
export class DeliveryTriggers {
  constructor(
    private readonly services: SandboxServices,
    private readonly queries: DeliveryQueries,
    private readonly secrets: Secrets,
    private readonly engine: DeliveryEngine,
  ) {}

  onRunFinished(orgId: string, run: Run & SecretNaming): void {
    const { store } = this.services
    const payload = runPayload(run, this.services.clock())
    if (!payload) return
    const frozen = freeze(payload)
    store.transaction(() => {
      if (run.callback_url) {
        const stored = store.get<Run & SecretNaming>('runs', run.id, orgId)
        const secretId = namedSecretId(run, stored)
        this.runCallback(orgId, run.id, run.callback_url, secretId, frozen, true)
      }
      this.webhookDeliveries(orgId, payload.event, { run_id: run.id, batch_id: null }, frozen)
    })
  }

  onBatchFinished(orgId: string, batch: Batch & SecretNaming): void {
    const { store } = this.services
    const payload = batchPayload(
      batch,
      // Presented like GET /v1/runs/{id}: fresh output URLs, no internal fields.
      (runId) => {
        const stored = store.get<Run>('runs', runId, orgId)
        return stored && presentRun(this.services, stored)
      },
      this.services.clock(),
    )
    if (!payload) return
    const frozen = freeze(payload)
    store.transaction(() => {
      if (batch.callback_url) {
        const stored = store.get<Batch & SecretNaming>('batches', batch.id, orgId)
        const secretId = namedSecretId(batch, stored)
        this.batchCallback(orgId, batch.id, batch.callback_url, secretId, frozen)
      }
      this.webhookDeliveries(orgId, payload.event, { run_id: null, batch_id: batch.id }, frozen)
    })
  }

  /** A run callback delivery; `automatic` is false for a redelivery a caller asked for. */
  runCallback(
    orgId: string,
    runId: string,
    url: string,
    secretId: string | null | undefined,
    frozen: Frozen<RunCallbackPayload>,
    automatic: boolean,
  ): RunCallbackDelivery {
    const { store } = this.services
    const signer = this.secrets.callbackSigner(orgId, secretId)
    return this.engine.open<RunCallbackDelivery>(COLLECTIONS.runCallbacks, orgId, runId, {
      id: store.newId(),
      run_id: runId,
      callback_url: url,
      payload_bytes: frozen.bytes,
      payload: frozen.payload,
      signing_secret_id: signer.id,
      is_automatic: automatic,
      ...this.engine.freshState(store.now()),
    })
  }

  private batchCallback(
    orgId: string,
    batchId: string,
    url: string,
    secretId: string | null | undefined,
    frozen: Frozen<BatchCallbackPayload>,
  ): void {
    const { store } = this.services
    const signer = this.secrets.callbackSigner(orgId, secretId)
    this.engine.open<BatchCallbackDelivery>(COLLECTIONS.batchCallbacks, orgId, batchId, {
      id: store.newId(),
      batch_id: batchId,
      callback_url: url,
      payload_bytes: frozen.bytes,
      payload: frozen.payload,
      signing_secret_id: signer.id,
      is_automatic: true,
      ...this.engine.freshState(store.now()),
    })
  }

  /** A webhook with no subscription, or switched off, never fires. */
  private webhookDeliveries(
    orgId: string,
    event: EventType,
    subject: { run_id: string | null; batch_id: string | null },
    frozen: Frozen<RunCallbackPayload | BatchCallbackPayload>,
  ): void {
    const { store } = this.services
    const subscribers = this.queries
      .all<Webhook>(COLLECTIONS.webhooks, orgId)
      .filter(
        (webhook) =>
          webhook.is_active && webhook.event_subscriptions.some((s) => s.event_type_code === event),
      )
    for (const webhook of subscribers) {
      this.engine.open<WebhookDelivery>(COLLECTIONS.webhookDeliveries, orgId, webhook.id, {
        id: store.newId(),
        webhook_id: webhook.id,
        event_type_code: event,
        ...subject,
        payload_bytes: frozen.bytes,
        payload: frozen.payload,
        ...this.engine.freshState(store.now()),
      })
    }
  }
}
