import { show, typeProblem, validatorProblem, type ValidatorRule } from '../values'
import type { AnalysisContext, Place } from './context'

/**
 * A literal value (or default) against its type, then its validators: the first thing wrong
 * with it is reported, as the service would refuse it, before anything is dispatched.
 */
export function checkValue(
  context: AnalysisContext,
  value: unknown,
  type: string,
  rules: readonly ValidatorRule[],
  path: string,
  what: string,
  place: Place,
): void {
  const wanted = typeProblem(type, value)
  if (wanted !== null) {
    context.report(
      'INVALID_VALUE',
      path,
      `${what} must be ${wanted}, but it is ${show(value)}.`,
      place,
    )
    return
  }
  for (const rule of rules) {
    const problem = validatorProblem(rule, value)
    if (problem !== null) {
      context.report('VALIDATOR_VIOLATION', path, `${what} ${problem}.`, place)
      return
    }
  }
}

/** The validators a value meets: its own, and its port's when that is another one. */
export function rulesOf(own: ValidatorRule, port: ValidatorRule | undefined): ValidatorRule[] {
  const rules = own.validator_code !== null ? [own] : []
  if (
    port &&
    port.validator_code !== null &&
    (port.validator_code !== own.validator_code ||
      JSON.stringify(port.validator_attrs) !== JSON.stringify(own.validator_attrs))
  ) {
    rules.push(port)
  }
  return rules
}
