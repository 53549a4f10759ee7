import type { FastifyInstance, FastifyRequest } from 'fastify'
import { SandboxError } from '../errors'
import { findShapeProblems } from './body-shape'
import { MAX_BODY_BYTES } from './limits'
import { validationRefusal } from './validation-problems'

/** What an operation's contract says of its body: none, an optional one, or a required one. */
export type BodyRule = 'none' | 'optional' | 'required'

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Set on every contract route; the admin and storage routes read their bodies themselves. */
    requestBody?: BodyRule
  }
}

/** The only media type the contract's bodies come in. */
const JSON_TYPE = 'application/json'

const SEND_JSON = `Send the body as JSON with the header Content-Type: ${JSON_TYPE}.`

/** A problem with the body as a whole (`field` null: it is not about one field). */
function refusal(status: number, code: string, problem: string, message: string): SandboxError {
  return new SandboxError(status, code, message, [{ field: null, code: problem, message }])
}

/** Whether the request carries content, by its framing (as Node itself decides). */
function hasContent(request: FastifyRequest): boolean {
  const length = request.headers['content-length']
  return (
    request.headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0')
  )
}

/** `application/json` from `Application/JSON; charset=utf-8`; '' when none was sent. */
function mediaTypeOf(request: FastifyRequest): string {
  return (request.headers['content-type'] ?? '').split(';')[0]?.trim().toLowerCase() ?? ''
}

/** 415 for content that is not declared as JSON. */
function unsupported(request: FastifyRequest): SandboxError {
  const sent = mediaTypeOf(request)
  const what = sent
    ? `The body is ${sent}, which is not accepted`
    : 'The body was sent without a Content-Type, which is not accepted'
  const where = request.routeOptions.config.requestBody ? ` by ${operationOf(request)}` : ''
  return refusal(
    415,
    'UNSUPPORTED_MEDIA_TYPE',
    'unsupported_media_type',
    `${what}${where}. ${SEND_JSON}`,
  )
}

function operationOf(request: FastifyRequest): string {
  const { openapiPath } = request.routeOptions.config
  return `${request.method} ${openapiPath ?? request.url.split('?')[0] ?? ''}`
}

/**
 * The one place where every request body of the server is read, parsed, held to the limits of
 * ./limits and validated, before any handler sees it:
 *
 * - bodies are JSON only: Fastify's other parsers (its `text/plain` one let `{}` through as a
 *   string that emptied a flow) are gone, and any other type is 415 UNSUPPORTED_MEDIA_TYPE;
 * - a body over 16 MiB is 413, invalid JSON 400, too deep, too long a string or a forbidden key
 *   (`__proto__`) 422, all found by a walk that cannot overflow the stack;
 * - the contract's schema then checks the parsed body strictly (no coercion: see
 *   ../lazy-compilers) and its failures become 422 VALIDATION_FAILED with one problem a field;
 * - a contract route with a required body and none sent is 415 (no Content-Type) or 400 (an
 *   empty application/json body), and one whose operation takes no body but got one is 400.
 *
 * Call it before the routes are added; it holds for every route of `app` but those registered in
 * a scope that replaces the parsers (the storage routes, which take raw bytes).
 */
export function readRequestBodies(app: FastifyInstance): void {
  app.setSchemaErrorFormatter(validationRefusal)
  app.removeAllContentTypeParsers()

  app.addContentTypeParser(
    JSON_TYPE,
    { parseAs: 'string', bodyLimit: MAX_BODY_BYTES },
    (request, text, done) => {
      // No route answers here: the 404 must not depend on what was sent.
      if (request.is404) {
        done(null, undefined)
        return
      }
      // `Content-Type: application/json` with nothing after it is no body; whether that is
      // allowed is the route's to say (below).
      if (text.length === 0) {
        done(null, undefined)
        return
      }
      let body: unknown
      try {
        // A string: `parseAs: 'string'` (Fastify's types allow for a Buffer too).
        body = JSON.parse(text as string)
      } catch (error) {
        const reason = error instanceof Error ? ` (${error.message})` : ''
        done(
          refusal(
            400,
            'BAD_REQUEST',
            'invalid_json',
            `The body is not valid JSON${reason}. ${SEND_JSON}`,
          ),
          undefined,
        )
        return
      }
      const problems = findShapeProblems(body)
      if (problems.length > 0) {
        const shown = problems.slice(0, 3).map((problem) => problem.message)
        done(
          new SandboxError(
            422,
            'VALIDATION_FAILED',
            `The body cannot be accepted: ${shown.join(' ')}`,
            problems,
          ),
          undefined,
        )
        return
      }
      done(null, body)
    },
  )

  // Every other type (and content with no type at all) lands here.
  app.addContentTypeParser('*', (request, _payload, done) => {
    done(request.is404 ? null : unsupported(request), undefined)
  })

  // Before a byte of the body is read: whether this operation takes one at all, and its type.
  app.addHook('preParsing', (request, _reply, payload, done) => {
    done(preParsingRefusal(request), payload)
  })

  // After parsing, before the schema: a required body that never came.
  app.addHook('preValidation', (request, _reply, done) => {
    if (request.routeOptions.config.requestBody !== 'required' || request.body !== undefined) {
      done()
      return
    }
    const message = `${operationOf(request)} needs a body and none was sent. ${SEND_JSON}`
    // Nothing declared as JSON is 415, as the contract says of a body-taking operation sent no
    // Content-Type: the client has not said it speaks JSON at all. Declared as JSON but empty is
    // 400, not 422, as invalid JSON is: there is no document, so no field of it can be wrong,
    // and 422's errors[] means "fix these fields".
    done(
      mediaTypeOf(request) === JSON_TYPE
        ? refusal(400, 'BAD_REQUEST', 'missing_body', message)
        : refusal(415, 'UNSUPPORTED_MEDIA_TYPE', 'missing_body', message),
    )
  })
}

/** What a contract route refuses from the headers alone, before the body is read. */
function preParsingRefusal(request: FastifyRequest): SandboxError | null {
  const rule = request.routeOptions.config.requestBody
  if (rule === undefined || !hasContent(request)) return null
  // Refused rather than ignored: a client sending a body here expects it to matter (a cancel
  // "reason", say), and a strict service would refuse it; silently dropping it hides the bug.
  if (rule === 'none') {
    return refusal(
      400,
      'BAD_REQUEST',
      'unexpected_body',
      `${operationOf(request)} takes no body; send the request without one.`,
    )
  }
  if (mediaTypeOf(request) !== JSON_TYPE) return unsupported(request)
  // Refused before reading; a longer body without a length stops at the parser's bodyLimit.
  if (Number(request.headers['content-length']) > MAX_BODY_BYTES) {
    return refusal(
      413,
      'PAYLOAD_TOO_LARGE',
      'too_large',
      `The body is larger than ${String(MAX_BODY_BYTES)} bytes (16 MiB); send a smaller one.`,
    )
  }
  return null
}
