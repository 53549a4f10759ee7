import { STATUS_CODES, maxHeaderSize } from 'node:http'
import type { Socket } from 'node:net'
import { uuidv7, type Clock } from './clock'

/** What Node's HTTP parser reports when a request cannot be read as HTTP at all. */
interface ConnectionError extends Error {
  code?: string
}

interface Refusal {
  status: number
  code: string
  message: string
}

const KIB = 1024

function refusalOf(error: ConnectionError): Refusal {
  if (error.code === 'HPE_HEADER_OVERFLOW') {
    return {
      status: 431,
      code: 'REQUEST_HEADER_FIELDS_TOO_LARGE',
      message: `The request line and headers together are larger than the ${maxHeaderSize / KIB} KiB this service reads. Shorten the query string (fewer or shorter q clauses, fewer fields) or the headers, and send large data in a request body instead.`,
    }
  }
  if (error.code === 'ERR_HTTP_REQUEST_TIMEOUT') {
    return {
      status: 408,
      code: 'REQUEST_TIMEOUT',
      message: 'The request did not arrive in full in time; send it again.',
    }
  }
  return {
    status: 400,
    code: 'BAD_REQUEST',
    message: 'The request is not valid HTTP/1.1 and could not be read; check the client.',
  }
}

/**
 * Fastify's `clientErrorHandler`: answers a request that Node's HTTP parser refused before any
 * route saw it (headers too large, malformed HTTP, too slow) with the service's envelope and a
 * `Service-Request-Id`, like every other answer, instead of Fastify's bare default. There is no
 * request or reply object at this point, so the answer is written to the socket by hand, and the
 * connection is closed after it: the parser cannot find where the next request would start.
 */
export function clientErrorHandler(clock: Clock): (error: ConnectionError, socket: Socket) => void {
  return (error, socket) => {
    // A reset connection, or one already answering an earlier request on it: nothing to write to.
    const busy = (socket as { _httpMessage?: { headersSent?: boolean } })._httpMessage?.headersSent
    if (error.code === 'ECONNRESET' || !socket.writable || busy) {
      socket.destroy()
      return
    }
    const { status, code, message } = refusalOf(error)
    const body = JSON.stringify({ code, message, errors: null })
    socket.end(
      [
        `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? ''}`,
        'Content-Type: application/json; charset=utf-8',
        `Content-Length: ${Buffer.byteLength(body)}`,
        `Service-Request-Id: ${uuidv7(clock())}`,
        'Connection: close',
        '',
        body,
      ].join('\r\n'),
    )
  }
}
