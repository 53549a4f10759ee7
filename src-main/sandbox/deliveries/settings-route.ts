import type { FastifyInstance, FastifyRequest } from 'fastify'
import { SandboxError } from '../errors'
import type { SandboxServices } from '../services'
import type { DeliveryEngine } from './engine'

/**
 * `GET|PUT /_sandbox/delivery-settings` (admin key, outside the contract): the attempt timeout
 * and the retry schedule, so that tests and demos need not wait out the real 1 s, 2 s, 4 s …
 * New values apply to attempts made and deliveries created from then on.
 */
export function deliverySettingsRoute(services: SandboxServices, engine: DeliveryEngine) {
  const admin = (request: FastifyRequest) => {
    const auth = services.accounts.authenticate(request.headers)
    if (!auth.scopes.has('sandbox:admin')) {
      throw new SandboxError(403, 'PERMISSION_DENIED', 'Only the admin key controls the sandbox.')
    }
  }
  const view = () => ({
    timeout_ms: engine.settings.timeoutMs,
    retry_base_ms: engine.settings.retryBaseMs,
    max_attempts: engine.settings.maxAttempts,
  })
  return (app: FastifyInstance) => {
    app.get('/_sandbox/delivery-settings', (request) => {
      admin(request)
      return view()
    })
    app.put('/_sandbox/delivery-settings', async (request) => {
      admin(request)
      const { parseAdminBody } = await import('../admin-schemas')
      const body = parseAdminBody(
        'deliverySettings',
        request.body,
        'The delivery settings are not valid: timeout_ms 1 to 120000, retry_base_ms 0 to 3600000, max_attempts 1 to 20.',
      )
      engine.settings = {
        timeoutMs: body.timeout_ms ?? engine.settings.timeoutMs,
        retryBaseMs: body.retry_base_ms ?? engine.settings.retryBaseMs,
        maxAttempts: body.max_attempts ?? engine.settings.maxAttempts,
      }
      return view()
    })
  }
}
