import http, {
  type IncomingHttpHeaders,
  type IncomingMessage,
  type ServerResponse,
} from 'node:http'
import type { AddressInfo, Socket } from 'node:net'

/**
 * A real HTTP server on 127.0.0.1 that answers each request with the next
 * reply from a queue, so a test can script what a bad network or a bad
 * service does to the client: errors, resets, cut-off bodies, silence.
 */

export interface RecordedRequest {
  method: string
  /** Path and query, as sent. */
  url: string
  headers: IncomingHttpHeaders
  body: string
  /** Whether the reply was written to the end (false after a reset or a client hang-up). */
  completed: boolean
}

export interface ReplyContext {
  req: IncomingMessage
  res: ServerResponse
  recorded: RecordedRequest
  /** Runs `fn` after `ms` unless the server closes first. */
  later(ms: number, fn: () => void): void
}

export type Reply = (context: ReplyContext) => void

export interface MisbehavingServer {
  /** `http://127.0.0.1:<port>` */
  readonly url: string
  /** Every request received, in order. */
  readonly requests: RecordedRequest[]
  /** Queues replies; each request takes the next one. */
  enqueue(...replies: Reply[]): void
  /** Answers requests once the queue is empty; a 404 naming the mistake by default. */
  fallback: Reply
  close(): Promise<void>
}

type Headers = Record<string, string>

export const reply = {
  json(status: number, body: unknown, headers: Headers = {}): Reply {
    return reply.raw(status, JSON.stringify(body), {
      'Content-Type': 'application/json',
      ...headers,
    })
  },

  /** The service's error envelope. */
  error(
    status: number,
    code: string,
    message: string,
    extra: object = {},
    headers?: Headers,
  ): Reply {
    return reply.json(status, { code, message, errors: null, ...extra }, headers)
  },

  raw(status: number, body: string | Buffer, headers: Headers = {}): Reply {
    return ({ res }) => {
      res.writeHead(status, { 'Content-Length': String(Buffer.byteLength(body)), ...headers })
      res.end(body)
    }
  },

  /** Sends a TCP reset instead of an answer, after reading the request. */
  reset(): Reply {
    return ({ req }) => {
      req.socket.resetAndDestroy()
    }
  },

  /** Closes the connection without a word. */
  hangUp(): Reply {
    return ({ req }) => {
      req.socket.destroy()
    }
  },

  /** Promises `declaredLength` bytes, sends `body`, then drops the connection. */
  truncated(status: number, body: string, declaredLength: number, headers: Headers = {}): Reply {
    return ({ res }) => {
      res.writeHead(status, {
        'Content-Type': 'application/json',
        ...headers,
        'Content-Length': String(declaredLength),
      })
      res.write(body, () => {
        res.socket?.destroy()
      })
    }
  },

  /** Waits before replying with `then`. */
  slow(ms: number, then: Reply): Reply {
    return (context) => {
      context.later(ms, () => {
        then(context)
      })
    }
  },

  /** Never answers; the connection stays open until the client or the server closes it. */
  silence(): Reply {
    return () => undefined
  },

  /** A body of `bytes` bytes, written as fast as the client reads it. */
  huge(status: number, bytes: number, contentType = 'text/html', headers: Headers = {}): Reply {
    return ({ res }) => {
      res.writeHead(status, {
        'Content-Type': contentType,
        'Content-Length': String(bytes),
        ...headers,
      })
      const chunk = Buffer.alloc(64 * 1024, '<p>error</p>')
      let left = bytes
      const pump = (): void => {
        while (left > 0 && !res.destroyed) {
          const piece = left >= chunk.length ? chunk : chunk.subarray(0, left)
          left -= piece.length
          if (!res.write(piece)) {
            res.once('drain', pump)
            return
          }
        }
        if (left === 0) res.end()
      }
      pump()
    }
  },
}

export async function startMisbehavingServer(): Promise<MisbehavingServer> {
  const queue: Reply[] = []
  const requests: RecordedRequest[] = []
  const sockets = new Set<Socket>()
  const timers = new Set<NodeJS.Timeout>()

  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (chunk: Buffer) => chunks.push(chunk))
    req.on('end', () => {
      const recorded: RecordedRequest = {
        method: req.method ?? '',
        url: req.url ?? '',
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
        completed: false,
      }
      requests.push(recorded)
      res.on('finish', () => {
        recorded.completed = true
      })
      // The client hanging up mid-reply is part of what these tests provoke.
      res.on('error', () => undefined)
      const later = (ms: number, fn: () => void): void => {
        const timer = setTimeout(() => {
          timers.delete(timer)
          fn()
        }, ms)
        timers.add(timer)
      }
      const next = queue.shift() ?? handle.fallback
      next({ req, res, recorded, later })
    })
  })
  server.on('connection', (socket) => {
    sockets.add(socket)
    socket.on('error', () => undefined)
    socket.on('close', () => sockets.delete(socket))
  })

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo

  const handle: MisbehavingServer = {
    url: `http://127.0.0.1:${port}`,
    requests,
    enqueue(...replies) {
      queue.push(...replies)
    },
    fallback: reply.error(404, 'NO_REPLY_QUEUED', 'The test queued no reply for this request.'),
    async close() {
      for (const timer of timers) clearTimeout(timer)
      timers.clear()
      for (const socket of sockets) socket.destroy()
      await new Promise<void>((resolve) => {
        server.close(() => {
          resolve()
        })
      })
    },
  }
  return handle
}
