import { isIP } from 'node:net'
import { conflict, invalid, notFound } from '../errors'
import { getOne, listOf } from '../handlers/common'
import type { Handlers } from '../handlers/types'
import type { RecordStore } from '../store'
import type { DeliveryEngine } from './engine'
import type { DeliveryQueries } from './queries'
import {
  COLLECTIONS,
  type EventType,
  type Webhook,
  type WebhookDelivery,
  type WebhookDeliveryAttempt,
} from './records'
import type { Secrets } from './secrets'

export interface WebhookParts {
  queries: DeliveryQueries
  secrets: Secrets
  engine: DeliveryEngine
}

function isLoopback(hostname: string): boolean {
  const host = hostname.replace(/^\[(.*)\]$/, '$1').toLowerCase()
  if (host === 'localhost' || host.endsWith('.localhost') || host === '::1') return true
  return isIP(host) === 4 && host.startsWith('127.')
}

/** The spec asks for an HTTPS endpoint; the contract lets the local sandbox reach loopback over http too. */
function checkUrl(url: string): void {
  const parsed = URL.parse(url)
  const secure = parsed?.protocol === 'https:'
  const local = parsed?.protocol === 'http:' && isLoopback(parsed.hostname)
  if (!parsed || !(secure || local)) {
    const message =
      'url must be an https:// URL (http:// is accepted only for 127.0.0.1 and localhost).'
    throw invalid(`The webhook URL is not usable: ${message}`, [
      { field: 'url', code: 'format', message },
    ])
  }
}

function checkSubscriptions(subscriptions: { event_type_code: EventType }[]): void {
  const seen = new Set<EventType>()
  subscriptions.forEach((subscription, index) => {
    if (seen.has(subscription.event_type_code)) {
      const message = `${subscription.event_type_code} is listed twice; list each event type once.`
      throw invalid(`The event subscriptions are not valid: ${message}`, [
        { field: `event_subscriptions.${index}.event_type_code`, code: 'uniqueItems', message },
      ])
    }
    seen.add(subscription.event_type_code)
  })
}

function checkSecretPair(body: { secret_ciphertext?: string; secret_fingerprint?: string }): void {
  if ((body.secret_ciphertext === undefined) === (body.secret_fingerprint === undefined)) return
  const missing = body.secret_ciphertext === undefined ? 'secret_ciphertext' : 'secret_fingerprint'
  const message = 'secret_ciphertext and secret_fingerprint change together; send both.'
  throw invalid(`The webhook secret is incomplete: ${message}`, [
    { field: missing, code: 'dependentRequired', message },
  ])
}

function checkUrlFree(queries: DeliveryQueries, orgId: string, url: string, self?: string): void {
  const taken = queries
    .all<Webhook>(COLLECTIONS.webhooks, orgId)
    .find((webhook) => webhook.url === url && webhook.id !== self)
  if (taken) {
    throw conflict(
      `The webhook ${taken.id} already delivers to ${url}; change its event_subscriptions instead of adding another.`,
    )
  }
}

function requireWebhook(store: RecordStore, orgId: string, webhookId: string): void {
  if (webhookId !== 'any') store.require(COLLECTIONS.webhooks, webhookId, orgId, 'The webhook')
}

/** A delivery, seen through the webhook the path names (or `any`). */
function requireDelivery(
  store: RecordStore,
  orgId: string,
  webhookId: string,
  deliveryId: string,
): WebhookDelivery {
  const delivery = store.get<WebhookDelivery>(COLLECTIONS.webhookDeliveries, deliveryId, orgId)
  if (!delivery || (webhookId !== 'any' && delivery.webhook_id !== webhookId)) {
    throw notFound('The webhook delivery')
  }
  return delivery
}

const listDeliveries = listOf({
  collection: COLLECTIONS.webhookDeliveries,
  schema: 'WebhookDelivery',
  parentParam: 'webhook_id',
})

const listAttempts = listOf({
  collection: COLLECTIONS.webhookAttempts,
  schema: 'WebhookDeliveryAttempt',
  parentParam: 'delivery_id',
  defaultSort: 'attempt_number:asc',
})

/**
 * Organization webhooks and their delivery history. The webhook's `secret_ciphertext` is taken
 * as the signing key itself (assumed: the sandbox has no key service to decrypt it with); it is
 * stored apart from the webhook and only `secret_fingerprint` is ever shown.
 */
export function webhookHandlers({ queries, secrets, engine }: WebhookParts): Handlers {
  return {
    listWebhooks: listOf({ collection: COLLECTIONS.webhooks, schema: 'Webhook' }),

    getWebhook: getOne({ collection: COLLECTIONS.webhooks, idParam: 'id', what: 'The webhook' }),

    createWebhook: ({ body, auth, sandbox }) => {
      const { store } = sandbox
      checkUrl(body.url)
      const subscriptions = (body.event_subscriptions ?? []).map((s) => ({
        event_type_code: s.event_type_code,
      }))
      checkSubscriptions(subscriptions)
      return store.transaction(() => {
        checkUrlFree(queries, auth.orgId, body.url)
        const now = store.now()
        const webhook: Webhook = {
          id: store.newId(),
          org_id: auth.orgId,
          url: body.url,
          secret_fingerprint: body.secret_fingerprint,
          event_subscriptions: subscriptions,
          is_active: true,
          created_at: now,
          updated_at: now,
        }
        store.insert(COLLECTIONS.webhooks, auth.orgId, webhook)
        secrets.setKey(auth.orgId, webhook.id, body.secret_ciphertext)
        return webhook
      })
    },

    updateWebhook: ({ params, body, auth, sandbox }) => {
      const { store } = sandbox
      if (body.url !== undefined) checkUrl(body.url)
      checkSecretPair(body)
      const subscriptions = body.event_subscriptions?.map((s) => ({
        event_type_code: s.event_type_code,
      }))
      if (subscriptions) checkSubscriptions(subscriptions)
      return store.transaction(() => {
        store.require(COLLECTIONS.webhooks, params.id, auth.orgId, 'The webhook')
        if (body.url !== undefined) checkUrlFree(queries, auth.orgId, body.url, params.id)
        const updated = store.update<Webhook>(
          COLLECTIONS.webhooks,
          params.id,
          auth.orgId,
          (webhook) => ({
            ...webhook,
            ...(body.url === undefined ? {} : { url: body.url }),
            ...(body.secret_fingerprint === undefined
              ? {}
              : { secret_fingerprint: body.secret_fingerprint }),
            ...(subscriptions === undefined ? {} : { event_subscriptions: subscriptions }),
            ...(body.is_active === undefined ? {} : { is_active: body.is_active }),
          }),
          'The webhook',
        )
        if (body.secret_ciphertext !== undefined) {
          secrets.setKey(auth.orgId, params.id, body.secret_ciphertext)
        }
        return updated
      })
    },

    /** The webhook's deliveries and attempts go with it: their retries stop at once. */
    deleteWebhook: ({ params, auth, sandbox, status }) => {
      const { store } = sandbox
      store.require(COLLECTIONS.webhooks, params.id, auth.orgId, 'The webhook')
      const deliveries = queries.children<WebhookDelivery>(
        COLLECTIONS.webhookDeliveries,
        auth.orgId,
        params.id,
      )
      for (const delivery of deliveries) engine.forget(COLLECTIONS.webhookDeliveries, delivery.id)
      store.transaction(() => {
        store.remove(COLLECTIONS.webhooks, params.id, auth.orgId, 'The webhook')
        secrets.removeKey(auth.orgId, params.id)
        for (const delivery of deliveries) {
          const attempts = queries.children<WebhookDeliveryAttempt>(
            COLLECTIONS.webhookAttempts,
            auth.orgId,
            delivery.id,
          )
          for (const attempt of attempts) {
            store.remove(COLLECTIONS.webhookAttempts, attempt.id, auth.orgId)
          }
          store.remove(COLLECTIONS.webhookDeliveries, delivery.id, auth.orgId)
        }
      })
      status(204)
      return undefined
    },

    listWebhookDeliveries: (context) => {
      requireWebhook(context.sandbox.store, context.auth.orgId, context.params.webhook_id)
      return listDeliveries(context)
    },

    getWebhookDelivery: ({ params, auth, sandbox }) =>
      requireDelivery(sandbox.store, auth.orgId, params.webhook_id, params.id),

    listWebhookDeliveryAttempts: (context) => {
      const { params, auth, sandbox } = context
      requireDelivery(sandbox.store, auth.orgId, params.webhook_id, params.delivery_id)
      return listAttempts(context)
    },

    getWebhookDeliveryAttempt: ({ params, auth, sandbox }) => {
      requireDelivery(sandbox.store, auth.orgId, params.webhook_id, params.delivery_id)
      const attempt = sandbox.store.get<WebhookDeliveryAttempt & { updated_at: string }>(
        COLLECTIONS.webhookAttempts,
        params.id,
        auth.orgId,
      )
      if (!attempt || attempt.delivery_id !== params.delivery_id) {
        throw notFound('The delivery attempt')
      }
      return attempt
    },
  }
}
