import { z } from 'zod'

/**
 * Fault injection, so tests can prove the client survives what networks do. A rule matches
 * requests by operation id, method and path prefix; `times` bounds how often it fires and
 * `rate` makes it fire at random (seeded by the caller's `random`).
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

export interface RequestFacts {
  operationId: string | undefined
  method: string
  path: string
}

export class Faults {
  private rules: { rule: FaultRule; fired: number }[] = []

  constructor(private readonly random: () => number = Math.random) {}

  set(rules: FaultRule[]): void {
    this.rules = rules.map((rule) => ({ rule, fired: 0 }))
  }

  list(): (FaultRule & { fired: number })[] {
    return this.rules.map(({ rule, fired }) => ({ ...rule, fired }))
  }

  /** The first rule that matches and fires for this request, if any (counting it as fired). */
  pick(facts: RequestFacts): FaultRule | undefined {
    for (const entry of this.rules) {
      const { rule } = entry
      if (rule.operationId && rule.operationId !== facts.operationId) continue
      if (rule.method && rule.method !== facts.method) continue
      if (rule.pathPrefix && !facts.path.startsWith(rule.pathPrefix)) continue
      if (rule.times !== undefined && entry.fired >= rule.times) continue
      if (rule.rate !== undefined && this.random() >= rule.rate) continue
      entry.fired++
      return rule
    }
    return undefined
  }
}
