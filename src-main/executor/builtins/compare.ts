import { local, type BuiltinStep } from './context'

/**
 * `compare`: whether `value operator threshold` holds, on `passed`, for a branch to act on. The
 * operators are the service's: `<`, `<=`, `=`, `!=`, `>=` (the default), `>`; `=` is exact
 * equality of the two numbers, as the service compares them.
 */

export const OPERATORS = ['<', '<=', '=', '!=', '>=', '>'] as const
export type Operator = (typeof OPERATORS)[number]

export function compareNumbers(value: number, operator: Operator, threshold: number): boolean {
  switch (operator) {
    case '<':
      return value < threshold
    case '<=':
      return value <= threshold
    case '=':
      return value === threshold
    case '!=':
      return value !== threshold
    case '>':
      return value > threshold
    case '>=':
      return value >= threshold
  }
}

export const runCompare: BuiltinStep = (run) => {
  const value = run.ports.number('value', { required: true })
  const operator = run.ports.choice('operator', OPERATORS, { default: '>=' })
  const threshold = run.ports.number('threshold', { required: true })
  const passed = compareNumbers(value, operator, threshold)
  run.emit({
    type: 'log',
    level: 'info',
    message: `${value} ${operator} ${threshold} is ${passed}.`,
  })
  return Promise.resolve(local({ passed }))
}
