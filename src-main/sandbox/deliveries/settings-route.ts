import type { FastifyInstance, FastifyRequest } from 'fastify'
import { z } from 'zod'
import { SandboxError } from '../errors'
import type { SandboxServices } from '../services'
import type { DeliveryEngine } from './engine'

const settingsBody = z.strictObject({
  timeout_ms: z.int().min(1).max(120_000).optional(),
  retry_base_ms: z.int().min(0).max(3_600_000).optional(),
  max_attempts: z.int().min(1).max(20).optional(),
})

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
    app.put('/_sandbox/delivery-settings', (request) => {
      admin(request)
      const parsed = settingsBody.safeParse(request.body)
      if (!parsed.success) {
        const problems = parsed.error.issues.map((issue) => ({
          field: issue.path.map(String).join('.') || '(body)',
          code: issue.code,
          message: issue.message,
        }))
        throw new SandboxError(
          422,
          'VALIDATION_FAILED',
          'The delivery settings are not valid: timeout_ms 1 to 120000, retry_base_ms 0 to 3600000, max_attempts 1 to 20.',
          problems,
        )
      }
      const body = parsed.data
      engine.settings = {
        timeoutMs: body.timeout_ms ?? engine.settings.timeoutMs,
        retryBaseMs: body.retry_base_ms ?? engine.settings.retryBaseMs,
        maxAttempts: body.max_attempts ?? engine.settings.maxAttempts,
      }
      return view()
    })
  }
}
