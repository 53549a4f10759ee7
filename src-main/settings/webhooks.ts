import { randomBytes } from 'node:crypto'
import type { components } from '../../src-shared/api/schema.gen'
import type {
  CreatedWebhook,
  WebhookCreateInput,
  WebhookItem,
} from '../../src-shared/domain/settings'
import type { ServiceClient } from '../service'
import { online } from './errors'

type Webhook = components['schemas']['Webhook']

/** Where webhooks live, for the words of an OFFLINE refusal. */
const KEPT = 'Webhooks live on the service'

/** Webhooks shown at once; an organization has a handful. */
const LIST_LIMIT = 100

function itemOf(webhook: Webhook): WebhookItem {
  return {
    id: webhook.id,
    url: webhook.url,
    events: webhook.event_subscriptions.map((s) => s.event_type_code),
    fingerprint: webhook.secret_fingerprint,
    active: webhook.is_active,
    createdAt: webhook.created_at,
  }
}

export function listWebhooks(client: ServiceClient): Promise<WebhookItem[]> {
  return online('the webhooks cannot be listed', KEPT, async () => {
    const page = await client.get('/v1/webhooks', { params: { query: { limit: LIST_LIMIT } } })
    return page.items.map(itemOf)
  })
}

/**
 * The signing secret is made here and sent once: the service keeps it and shows only its last
 * four characters from then on, so this answer is the only place the user can copy it from.
 */
export function createWebhook(
  client: ServiceClient,
  input: Required<WebhookCreateInput>,
): Promise<CreatedWebhook> {
  const secret = `whsec_${randomBytes(32).toString('base64url')}`
  return online('the webhook was not created', KEPT, async () => {
    const webhook = await client.post('/v1/webhooks', {
      body: {
        url: input.url,
        secret_ciphertext: secret,
        secret_fingerprint: secret.slice(-4),
        event_subscriptions: input.events.map((code) => ({ event_type_code: code })),
      },
    })
    return { webhook: itemOf(webhook), secret }
  })
}

export async function deleteWebhook(client: ServiceClient, id: string): Promise<null> {
  await online('the webhook was not deleted', KEPT, () =>
    client.delete('/v1/webhooks/{id}', { params: { path: { id } } }),
  )
  return null
}
