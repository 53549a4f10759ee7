import type { FaultRule } from './admin-schemas'

export type { FaultRule } from './admin-schemas'

export interface RequestFacts {
  operationId: string | undefined
  method: string
  path: string
}

/**
 * Fault injection, so tests can prove the client survives what networks do. A rule matches
 * requests by operation id, method and path prefix; `times` bounds how often it fires and
 * `rate` makes it fire at random (seeded by the caller's `random`).
 */
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
