import { z } from 'zod'
import { SandboxError } from './errors'

/**
 * The bodies of the sandbox's own controls (`/_sandbox/…`, outside the contract) and of the
 * command's `--faults`. zod is loaded only when one of them is first used: at start it was a
 * sixth of the JavaScript the sandbox compiled before its ready line, for requests a demo never
 * makes.
 */
export const faultRuleSchema = z.strictObject({
  operationId: z.string().min(1).optional(),
  method: z.enum(['GET', 'POST', 'PUT', 'PATCH', 'DELETE']).optional(),
  pathPrefix: z.string().startsWith('/').optional(),
  latencyMs: z.int().min(0).max(60_000).optional(),
  /** Answer this status with the error envelope instead of running the operation. */
  status: z.union([z.literal(429), z.int().min(500).max(599)]).optional(),
  retryAfterSeconds: z.int().min(0).max(3600).optional(),
  /** Drop the connection before the operation runs, or after it ran but before the answer. */
  reset: z.enum(['before', 'after']).optional(),
  /** Send the headers and half of the body, then drop the connection. */
  truncate: z.boolean().optional(),
  rate: z.number().min(0).max(1).optional(),
  times: z.int().min(1).max(1_000_000).optional(),
})

export const faultRulesSchema = z.array(faultRuleSchema).max(100)

export type FaultRule = z.infer<typeof faultRuleSchema>

const bodies = {
  faults: z.strictObject({ rules: faultRulesSchema }),
  balance: z.strictObject({
    org_id: z.uuid().optional(),
    balance: z.string().regex(/^\d+(\.\d{1,6})?$/),
  }),
  deliverySettings: z.strictObject({
    timeout_ms: z.int().min(1).max(120_000).optional(),
    retry_base_ms: z.int().min(0).max(3_600_000).optional(),
    max_attempts: z.int().min(1).max(20).optional(),
  }),
}

export type AdminBodies = { [K in keyof typeof bodies]: z.infer<(typeof bodies)[K]> }

/** A control's body, checked; VALIDATION_FAILED (422) with one problem per field otherwise. */
export function parseAdminBody<K extends keyof AdminBodies>(
  kind: K,
  value: unknown,
  message = 'The request is not valid.',
): AdminBodies[K] {
  const schema: z.ZodType = bodies[kind]
  const result = schema.safeParse(value)
  if (!result.success) {
    const problems = result.error.issues.map((issue) => ({
      field: issue.path.map(String).join('.') || '(body)',
      code: issue.code,
      message: issue.message,
    }))
    throw new SandboxError(422, 'VALIDATION_FAILED', message, problems)
  }
  return result.data as AdminBodies[K]
}
