import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify'
import { Readable } from 'node:stream'
import { clientErrorHandler } from './client-errors'
import { uuidv7 } from './clock'
import type { AuthContext } from './accounts'
import { parseCredits } from './accounts'
import { SandboxError } from './errors'
import type { FaultRule } from './faults'
import { lazyCompilers } from './lazy-compilers'
import { ListError } from './list'
import { readRequestBodies, type BodyRule } from './request'
import { MAX_BODY_BYTES } from './request/limits'
import { contractRoutes, contractSchema } from './routes'
import type { Handler, Handlers, OperationId } from './handlers/types'
import type { SandboxArea } from './handlers/types'
import type { SandboxServices } from './services'

declare module 'fastify' {
  interface FastifyRequest {
    auth?: AuthContext
  }
  interface FastifyContextConfig {
    operationId?: string
    openapiPath?: string
    requiredScope?: string
    successStatus?: number
  }
}

function envelope(reply: FastifyReply, error: SandboxError | ListError): FastifyReply {
  if (error instanceof SandboxError) reply.headers(error.headers)
  return reply
    .code(error.status)
    .type('application/json')
    .send({ code: error.code, message: error.message, errors: error.errors })
}

function successStatusOf(responses: Record<string, unknown> | undefined): number {
  const codes = Object.keys(responses ?? {})
  for (const code of ['201', '200', '202', '204']) if (codes.includes(code)) return Number(code)
  return 200
}

/** Drops the connection as a flaky network would: no answer at all. */
function resetConnection(request: FastifyRequest, reply: FastifyReply): void {
  reply.hijack()
  request.raw.socket.destroy()
}

export async function buildServer(
  services: SandboxServices,
  areas: readonly SandboxArea[],
): Promise<FastifyInstance> {
  const handlers: Handlers = {}
  for (const area of areas) Object.assign(handlers, area.handlers)
  const app = createApp(services)
  readRequestBodies(app)
  addRequestHook(app, services)
  await addResponseHook(app, services)
  setErrorHandlers(app)
  registerContractRoutes(app, services, handlers)
  registerAdminRoutes(app, services)
  for (const area of areas) area.routes?.(app)
  return app
}

/** Fastify as the sandbox needs it: the contract's body limit, request ids and Ajv settings. */
function createApp(services: SandboxServices): FastifyInstance {
  return Fastify({
    logger: false,
    // The contract defines no HEAD operation, so the sandbox answers none: Fastify's default
    // registers a HEAD twin of every GET route, a third of the routes and of the registration
    // time at every start (about 40 ms of the ready line), for requests no client sends.
    exposeHeadRoutes: false,
    bodyLimit: MAX_BODY_BYTES,
    genReqId: () => uuidv7(services.clock()),
    return503OnClosing: true,
    clientErrorHandler: clientErrorHandler(services.clock),
    // Closing the sandbox (the app quitting, a test ending) must not wait on a client that keeps
    // a connection open: whatever is still open then is cut, as a real server going away would.
    forceCloseConnections: true,
    schemaController: { compilersFactory: lazyCompilers() },
    ajv: {
      customOptions: {
        strict: false,
        allErrors: true,
        coerceTypes: 'array',
        removeAdditional: false,
        useDefaults: true,
        // Each error carries the value that failed, so a refusal can say what was sent.
        verbose: true,
        // The route schemas are the contract's, which its own tests lint; checking them against
        // the meta-schema at every start cost more than half a second.
        validateSchema: false,
      },
      // No plugins: Fastify's compiler adds ajv-formats itself, when it makes its Ajv.
      // The contract's components, which the routes' schemas refer to, go straight into Ajv:
      // registered with Fastify, every start would serialize all of them to key its Ajv pool.
      onCreate: (ajv) => {
        ajv.addSchema(contractSchema(services.contract.document))
      },
    },
  })
}

/**
 * Before routing a request: its id on the answer, the fault rules that match it (delay, drop,
 * refuse) and, for a contract operation, the key and its scope.
 */
function addRequestHook(app: FastifyInstance, services: SandboxServices): void {
  app.addHook('onRequest', async (request, reply) => {
    reply.header('Service-Request-Id', request.id)
    const config = request.routeOptions.config
    const rule = services.faults.pick({
      operationId: config.operationId,
      method: request.method,
      path: request.url.split('?')[0] ?? '',
    })
    if (rule) {
      ;(request as { fault?: FaultRule }).fault = rule
      if (rule.latencyMs) await new Promise((resolve) => setTimeout(resolve, rule.latencyMs))
      if (rule.reset === 'before') {
        resetConnection(request, reply)
        return reply
      }
      if (rule.status) {
        const headers: Record<string, string> =
          rule.retryAfterSeconds === undefined
            ? {}
            : { 'Retry-After': String(rule.retryAfterSeconds) }
        const code = rule.status === 429 ? 'RATE_LIMITED' : 'SERVICE_UNAVAILABLE'
        return envelope(
          reply,
          new SandboxError(rule.status, code, `Injected fault: ${rule.status}.`, null, headers),
        )
      }
    }
    if (config.operationId) {
      request.auth = services.accounts.authenticate(request.headers)
      if (config.requiredScope && !request.auth.scopes.has(config.requiredScope)) {
        throw new SandboxError(
          403,
          'PERMISSION_DENIED',
          `This key lacks the scope ${config.requiredScope} that this operation needs.`,
        )
      }
    }
    return undefined
  })
}

/**
 * Before an answer leaves: the contract check of its body (when switched on) and the fault rules
 * that act on the way out (drop after answering, cut the body in half).
 */
async function addResponseHook(app: FastifyInstance, services: SandboxServices): Promise<void> {
  // Loaded only when asked for (the tests): its Ajv is of no use to a user's sandbox.
  const checker = services.config.checkResponses
    ? new (await import('./response-check')).ResponseChecker(services.contract)
    : null
  app.addHook('onSend', async (request, reply, payload) => {
    const { openapiPath } = request.routeOptions.config
    const projected =
      typeof (request.query as { fields?: unknown } | undefined)?.fields === 'string'
    if (checker && openapiPath && typeof payload === 'string' && !projected) {
      const problems = checker.check(
        openapiPath,
        request.method,
        reply.statusCode,
        JSON.parse(payload) as unknown,
      )
      if (problems.length > 0) {
        const message = `The sandbox answered ${request.method} ${openapiPath} (${reply.statusCode}) with a body that breaks the contract: ${problems.join('; ')}`
        console.error(message)
        reply.code(500)
        return JSON.stringify({ code: 'CONTRACT_VIOLATION', message, errors: null })
      }
    }
    const rule = (request as { fault?: FaultRule }).fault
    if (rule?.reset === 'after') {
      resetConnection(request, reply)
      return payload
    }
    if (rule?.truncate && (typeof payload === 'string' || Buffer.isBuffer(payload))) {
      // Promise the whole body, send half, then fail the stream: the connection drops mid-body.
      const bytes = Buffer.from(payload)
      reply.header('content-length', bytes.length)
      const half = bytes.subarray(0, Math.floor(bytes.length / 2))
      let pushed = false
      return new Readable({
        read() {
          if (pushed) return
          pushed = true
          this.push(half)
          setTimeout(() => {
            this.destroy(new Error('truncated on purpose by a fault rule'))
          }, 20)
        },
      })
    }
    return payload
  })
}

/** Every refusal in the one envelope, whoever raised it: a handler, Fastify or an unknown path. */
function setErrorHandlers(app: FastifyInstance): void {
  app.setErrorHandler((error: unknown, _request, reply) => {
    if (error instanceof SandboxError || error instanceof ListError) return envelope(reply, error)
    // What is left are Fastify's own refusals (./request answers the usual ones itself): a body
    // over the limit sent without a Content-Length, a Content-Type it cannot read, a length that
    // does not match the bytes.
    const fastifyError = error as { statusCode?: number; message?: string }
    const status = fastifyError.statusCode ?? 500
    if (status >= 400 && status < 500) {
      // The problem codes are those ./request gives the same refusals.
      const [code, problem, message] =
        status === 413
          ? [
              'PAYLOAD_TOO_LARGE',
              'too_large',
              `The body is larger than ${String(MAX_BODY_BYTES)} bytes (16 MiB); send a smaller one.`,
            ]
          : status === 415
            ? [
                'UNSUPPORTED_MEDIA_TYPE',
                'unsupported_media_type',
                'The Content-Type header cannot be read. Send the body as JSON with the header Content-Type: application/json.',
              ]
            : ['BAD_REQUEST', 'bad_request', fastifyError.message ?? 'The request is not valid.']
      return envelope(
        reply,
        new SandboxError(status, code, message, [{ field: null, code: problem, message }]),
      )
    }
    console.error('sandbox: unexpected error', error)
    return envelope(
      reply,
      new SandboxError(500, 'INTERNAL', 'The sandbox hit an unexpected problem; try again.'),
    )
  })

  app.setNotFoundHandler((request, reply) =>
    envelope(
      reply,
      new SandboxError(
        404,
        'NOT_FOUND',
        `There is no ${request.method} ${request.url.split('?')[0] ?? ''} in this service.`,
      ),
    ),
  )
}

/**
 * One route per operation of the contract, with its schema for Fastify to validate requests, and
 * the handler an area gave it (501 when none did).
 */
function registerContractRoutes(
  app: FastifyInstance,
  services: SandboxServices,
  handlers: Handlers,
): void {
  const document = services.contract.document
  const original = document.paths as Record<
    string,
    Record<string, { responses?: Record<string, unknown>; requestBody?: { required?: boolean } }>
  >
  for (const contractRoute of contractRoutes(document)) {
    const { operationId, openapiPath, method } = contractRoute
    const info = services.contract.operations.find((op) => op.operationId === operationId)
    const handler = handlers[operationId as OperationId] as Handler<OperationId> | undefined
    const operation = original[openapiPath]?.[method.toLowerCase()]
    const requestBody: BodyRule = !operation?.requestBody
      ? 'none'
      : operation.requestBody.required === true
        ? 'required'
        : 'optional'
    app.route({
      method: contractRoute.method,
      url: contractRoute.url,
      schema: contractRoute.schema,
      config: {
        operationId,
        openapiPath,
        requiredScope: info?.requiredScope,
        successStatus: successStatusOf(operation?.responses),
        requestBody,
      },
      handler: async (request: FastifyRequest, reply: FastifyReply) => {
        if (!handler) {
          throw new SandboxError(
            501,
            'NOT_IMPLEMENTED',
            `The sandbox does not implement ${operationId} yet.`,
          )
        }
        let status = request.routeOptions.config.successStatus ?? 200
        const auth = request.auth
        if (!auth) throw new SandboxError(401, 'UNAUTHORIZED', 'No credentials were sent.')
        const body = await handler({
          params: request.params as never,
          query: request.query as never,
          body: request.body as never,
          headers: request.headers,
          auth,
          sandbox: services,
          status: (code) => {
            status = code
          },
          request,
          reply,
        })
        if (status === 204) return reply.code(204).send()
        return reply.code(status).send(body)
      },
    })
  }
}

/** Sandbox-only controls, outside the contract, for the admin key: faults and balances. */
function registerAdminRoutes(app: FastifyInstance, services: SandboxServices): void {
  const admin = (request: FastifyRequest): AuthContext => {
    const auth = services.accounts.authenticate(request.headers)
    if (!auth.scopes.has('sandbox:admin')) {
      throw new SandboxError(403, 'PERMISSION_DENIED', 'Only the admin key controls the sandbox.')
    }
    return auth
  }
  // Loaded at the first control request, not at start (see admin-schemas.ts).
  const bodies = () => import('./admin-schemas')

  app.get('/_sandbox/faults', (request) => {
    admin(request)
    return { rules: services.faults.list() }
  })
  app.put('/_sandbox/faults', async (request) => {
    admin(request)
    const { rules } = (await bodies()).parseAdminBody('faults', request.body)
    services.faults.set(rules)
    return { rules: services.faults.list() }
  })
  app.delete('/_sandbox/faults', (request, reply) => {
    admin(request)
    services.faults.set([])
    return reply.code(204).send()
  })
  app.put('/_sandbox/balance', async (request) => {
    const auth = admin(request)
    const body = (await bodies()).parseAdminBody('balance', request.body)
    const orgId = body.org_id ?? auth.orgId
    if (!auth.orgIds.includes(orgId))
      throw new SandboxError(404, 'NOT_FOUND', 'No such organization.')
    services.accounts.setBalance(orgId, parseCredits(body.balance))
    return { org_id: orgId, balance: body.balance }
  })
}
