import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import type { operations } from '../../../src-shared/api'
import type { AuthContext } from '../accounts'
import type { SandboxServices } from '../services'

export type OperationId = keyof operations

type Json<R> = R extends { content: { 'application/json': infer B } } ? B : undefined
type SuccessStatus = 200 | 201 | 202 | 204
type Responses<O extends OperationId> = operations[O]['responses']

/** What the operation answers on success, straight from the generated contract types. */
export type SuccessBody<O extends OperationId> = {
  [S in keyof Responses<O> & SuccessStatus]: Json<Responses<O>[S]>
}[keyof Responses<O> & SuccessStatus]

type Parameters<O extends OperationId> = operations[O]['parameters']

export type PathParams<O extends OperationId> =
  Parameters<O> extends { path: infer P } ? P : Record<string, never>

export type QueryParams<O extends OperationId> =
  Parameters<O> extends { query?: infer Q }
    ? [Q] extends [never]
      ? object
      : NonNullable<Q>
    : object

export type RequestBody<O extends OperationId> = operations[O] extends {
  requestBody: { content: { 'application/json': infer B } }
}
  ? B
  : operations[O] extends { requestBody?: { content: { 'application/json': infer B } } }
    ? B | undefined
    : undefined

export interface HandlerContext<O extends OperationId> {
  params: PathParams<O>
  query: QueryParams<O>
  body: RequestBody<O>
  /** Lower-cased header names, as Node gives them. */
  headers: Record<string, string | string[] | undefined>
  auth: AuthContext
  sandbox: SandboxServices
  /** Sets the success status when it is not the operation's first one (e.g. 200 on a replay). */
  status: (code: SuccessStatus) => void
  request: FastifyRequest
  reply: FastifyReply
}

export type Handler<O extends OperationId> = (
  context: HandlerContext<O>,
) => SuccessBody<O> | Promise<SuccessBody<O>>

export type Handlers = { [O in OperationId]?: Handler<O> }

// SandboxArea lives here, beside Handlers, rather than in ../services: the handler context needs
// SandboxServices, so the services module must not need the handler types back (a type circle).
/** One area of the service (runs, events, media, …): its operations and its background work. */
export interface SandboxArea {
  handlers: Handlers
  /** Extra routes outside the contract (presigned storage URLs). */
  routes?: (app: FastifyInstance) => void
  /** Stops timers and in-flight work; called once at close, before the database closes. */
  stop?: () => Promise<void> | void
}
