import { SandboxError, type FieldProblem } from '../errors'

/**
 * A list request the engine refuses: 400 `BAD_REQUEST` for a bad `q`, `sort_by`, `fields` or
 * cursor, 422 `VALIDATION_FAILED` (with field-level `errors`) for a `limit` out of range. It is a
 * {@link SandboxError}, so the server answers it with the usual `{code, message, errors}` envelope.
 */
export class ListError extends SandboxError {
  declare readonly status: 400 | 422
  declare readonly code: 'BAD_REQUEST' | 'VALIDATION_FAILED'
  declare readonly errors: FieldProblem[] | null

  constructor(
    status: 400 | 422,
    code: 'BAD_REQUEST' | 'VALIDATION_FAILED',
    message: string,
    errors: FieldProblem[] | null = null,
  ) {
    super(status, code, message, errors)
    this.name = 'ListError'
  }
}

export const badList = (message: string) => new ListError(400, 'BAD_REQUEST', message)

/** Quotes a piece of the request for a message, shortened so a huge `q` does not flood it. */
export function quote(text: string, max = 80): string {
  const short = text.length > max ? `${text.slice(0, max - 1)}…` : text
  return `\`${short}\``
}
