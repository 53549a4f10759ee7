/**
 * A field-level problem, as carried in the error envelope's `errors`: `field` is the dotted path
 * into the body (`nodes.1.name`) or `query.limit`, or null when the problem is with the request as
 * a whole (no body, the wrong content type), as the contract's ErrorDetail allows.
 */
export interface FieldProblem {
  field: string | null
  code: string
  message: string
}

/** An error the sandbox answers on purpose, always as the spec's envelope `{code, message, errors}`. */
export class SandboxError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly errors: FieldProblem[] | null = null,
    readonly headers: Record<string, string> = {},
  ) {
    super(message)
    this.name = 'SandboxError'
  }
}

export const notFound = (what: string, code = 'NOT_FOUND') =>
  new SandboxError(404, code, `${what} was not found in this organization.`)

export const conflict = (message: string, code = 'CONFLICT') => new SandboxError(409, code, message)

export const invalid = (message: string, errors: FieldProblem[]) =>
  new SandboxError(422, 'VALIDATION_FAILED', message, errors)

export const badRequest = (message: string) => new SandboxError(400, 'BAD_REQUEST', message)
