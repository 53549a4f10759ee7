import type { Expectation } from './fuzz-case'
import type { Answer } from './send'

const UPPER_SNAKE = /^[A-Z][A-Z0-9]*(_[A-Z0-9]+)*$/
/** The part of the request an error's `field` may start with (`body.items.3.input`, `query.limit`). */
const PARTS = new Set(['body', 'query', 'querystring', 'params', 'path', 'headers', 'header'])

function segments(field: string): string[] {
  const parts = field
    .toLowerCase()
    .split('.')
    .filter((part) => part !== '')
  return parts.length > 0 && PARTS.has(parts[0] ?? '') ? parts.slice(1) : parts
}

/** Whether an error's field names the defect's place, or an object around it, or inside it. */
function names(errorField: unknown, defect: string): boolean {
  if (typeof errorField !== 'string') return false
  const a = segments(errorField)
  const b = segments(defect)
  if (a.length === 0 || b.length === 0) return a.length === b.length
  const shorter = a.length <= b.length ? a : b
  const longer = shorter === a ? b : a
  return shorter.every((part, index) => part === longer[index])
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value)

/**
 * What is wrong with the answer to a request the contract says must be refused: it must be a
 * 4xx of the statuses the contract gives for that defect, carry `Service-Request-Id`, and be the
 * envelope `{code, message, errors}` with a stable upper-snake `code`, a message, and `errors`
 * null or `[{field, code, message}]` (non-empty on a 422, which "lists the per-field details").
 * Empty when the answer is right.
 */
export function refusalProblems(expected: Expectation, answer: Answer): string[] {
  const problems: string[] = []
  const shown = `${answer.status} ${answer.text.slice(0, 300)}`
  if (answer.status < 400 || answer.status >= 500) {
    problems.push(`answered ${shown}: a refusal is a 4xx`)
  } else if (!expected.statuses.includes(answer.status)) {
    problems.push(`answered ${shown}; the contract says ${expected.statuses.join(' or ')}`)
  }
  if (!answer.headers.get('service-request-id')) problems.push('no Service-Request-Id header')
  const body = answer.json
  if (!isObject(body)) {
    problems.push(
      `the body is not the error envelope: ${JSON.stringify(answer.text.slice(0, 200))}`,
    )
    return problems
  }
  if (typeof body.code !== 'string' || !UPPER_SNAKE.test(body.code)) {
    problems.push(`code ${JSON.stringify(body.code)} is not a stable UPPER_SNAKE code`)
  }
  if (typeof body.message !== 'string' || body.message.trim() === '') {
    problems.push('the message is empty')
  }
  const errors = body.errors
  if (errors !== null && !Array.isArray(errors)) {
    problems.push(`errors is ${JSON.stringify(errors)}, not null or a list`)
  } else if (Array.isArray(errors)) {
    for (const item of errors) {
      const fine =
        isObject(item) &&
        (item.field === null || typeof item.field === 'string') &&
        typeof item.code === 'string' &&
        typeof item.message === 'string'
      if (!fine) problems.push(`errors[] holds ${JSON.stringify(item)}, not {field, code, message}`)
    }
  }
  if (answer.status === 422 && (!Array.isArray(errors) || errors.length === 0)) {
    problems.push('a 422 with no errors[] details')
  }
  const field = expected.field
  if (field !== undefined && answer.status === 422 && Array.isArray(errors)) {
    if (!errors.some((item) => isObject(item) && names(item.field, field))) {
      const fields = errors.map((item) => (isObject(item) ? String(item.field) : '?'))
      problems.push(`errors[] names ${fields.join(', ')}, not ${field}, where the defect is`)
    }
  }
  const codes = expected.errorCodes
  if (codes && answer.status === 422 && Array.isArray(errors)) {
    const found = errors.some((item) => isObject(item) && codes.includes(String(item.code)))
    if (!found) problems.push(`no errors[] item has the code ${codes.join(' or ')}`)
  }
  return problems
}
