import { AsyncLocalStorage } from 'node:async_hooks'
import { tracingChannel } from 'node:diagnostics_channel'

/**
 * `Prefer: count=exact` → `X-Total-Count`, for every list operation at once.
 *
 * About forty handlers reach the list engine, many calling the store directly with their own
 * query, so neither the handlers nor a shared list handler are a place that sees them all. The
 * engine itself does: it learns the request it answers from Fastify's documented tracing
 * channel (`tracing:fastify.request.handler:start`, whose message is `{request, reply, route}`),
 * bound to an AsyncLocalStorage so the handler and everything it awaits run inside it. Outside a
 * request (seeders, benches) there is no store and nothing is counted.
 */

interface RequestContext {
  request: { headers: Record<string, string | string[] | undefined> }
  reply: { header: (name: string, value: string) => unknown }
}

const current = new AsyncLocalStorage<RequestContext>()
// The channel's message ({request, reply, route}) becomes the store as it is.
tracingChannel('fastify.request.handler').start.bindStore(current)

/** RFC 7240: preferences are comma-separated `token[=value]`, each with optional `;` params. */
export function prefersExactCount(header: string | string[] | undefined): boolean {
  if (header === undefined) return false
  const values = Array.isArray(header) ? header : [header]
  return values.some((value) =>
    value.split(',').some((preference) => {
      const [token = ''] = preference.split(';')
      return token.replace(/\s+/g, '').toLowerCase() === 'count=exact'
    }),
  )
}

/**
 * Where to put the count when the request being answered asked for one; null otherwise, so
 * that nobody pays for a count that was not asked for.
 */
export function requestedTotal(): ((total: number) => void) | null {
  const context = current.getStore()
  if (!context || !prefersExactCount(context.request.headers.prefer)) return null
  return (total) => {
    context.reply.header('X-Total-Count', String(total))
  }
}
