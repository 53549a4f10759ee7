import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { Duplex } from 'node:stream'
import { isSafeExternalUrl } from '../app/policy'
import { openLogger, type LogLevel } from '../log'
import { startServices, type AppServices } from '../services-thread'
import { createWebAuth, type WebAuth } from './auth'
import { BRIDGE_MAX_MESSAGE_BYTES, BRIDGE_PATH, createBridge, type Bridge } from './bridge'
import { rendererBundle } from './renderer-build'
import { systemOpener } from './open-external'
import { plain, SECURITY_HEADERS, staticSite, type StaticSite } from './static'

export interface WebServerOptions {
  home: string
  /** 0 (the default) picks a free port. */
  port?: number
  /** Loopback only: the bridge gives whoever holds the cookie the whole app. */
  host?: '127.0.0.1'
  /** The profile to use; without one, the current profile, else the local sandbox. */
  profile?: string
  logLevel?: LogLevel
  /** Opens an http(s) link the page asks for; by default the system's opener, as the desktop app. */
  openExternal?: (url: string) => Promise<void>
}

export interface WebServer {
  /** `http://127.0.0.1:PORT/?token=…`: the one way in. */
  readonly url: string
  /** `http://127.0.0.1:PORT`, without the token. */
  readonly origin: string
  /** Stops taking requests, closes every page's socket, then the core, the sandbox and the log. */
  close: () => Promise<void>
  /**
   * Settles once the services have started, or failed to (a profile the keychain or the service
   * refuses): the link is served before, so that the page loads while they start.
   */
  readonly ready: Promise<void>
}

const REFUSED =
  'This Atelier page needs the link `atelier web` printed (it carries a token). Open that link again; if `atelier web` was restarted, use the new one.'

function refuseUpgrade(socket: Duplex, status: string): void {
  socket.end(`HTTP/1.1 ${status}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`)
}

function route(
  auth: WebAuth,
  site: StaticSite,
): (request: IncomingMessage, response: ServerResponse) => Promise<void> {
  return async (request, response) => {
    const url = new URL(request.url ?? '/', auth.origin)
    const token = url.searchParams.get('token')
    if (token !== null) {
      if (url.pathname !== '/' || !auth.isOwnHost(request) || !auth.isToken(token)) {
        plain(response, 403, REFUSED)
      } else {
        // The token is traded for the cookie and leaves the address bar with this redirect.
        response.writeHead(303, {
          ...SECURITY_HEADERS,
          'Set-Cookie': auth.sessionCookie,
          Location: '/',
          'Cache-Control': 'no-store',
          'Content-Length': '0',
        })
        response.end()
      }
      return
    }
    if (!auth.hasSession(request)) {
      plain(response, 403, REFUSED)
      return
    }
    if (request.method !== 'GET' && request.method !== 'HEAD') {
      response.setHeader('Allow', 'GET, HEAD')
      plain(response, 405, 'Only GET and HEAD are answered here; the app talks over its bridge.')
      return
    }
    await site.serve(url.pathname, response, request.method === 'HEAD')
  }
}

/**
 * Atelier in a browser: the desktop app's main-process services (the backend, the core, the
 * IPC handlers) run here under Node, the renderer is served on 127.0.0.1, and `window.atelier`
 * reaches the handlers over the bridge's WebSocket. Resolves once it is listening.
 */
export async function startWebServer(options: WebServerOptions): Promise<WebServer> {
  const { home, port = 0, host = '127.0.0.1' } = options
  const logger = openLogger({
    home,
    ...(options.logLevel ? { level: options.logLevel } : {}),
    bindings: { process: 'web' },
  })
  const openExternal = options.openExternal ?? systemOpener(logger)
  let server: ReturnType<typeof createServer> | undefined
  let starting: Promise<AppServices> | undefined
  let bridge: Bridge | undefined
  const shutDown = async () => {
    bridge?.close()
    if (server) {
      server.closeAllConnections()
      const listening = server
      await new Promise<void>((resolve) => {
        listening.close(() => {
          resolve()
        })
      })
    }
    await starting?.then((services) => services.close()).catch(() => undefined)
    logger.close()
  }
  let closing: Promise<void> | undefined
  const closeServices = () => (closing ??= shutDown())

  try {
    // The services start (in a thread of their own, services-thread) while the renderer is
    // found or built and the page loads: the page waits for them only at its first call. A
    // profile the service or the keychain refuses is the user's to fix at the terminal: the
    // host throws those, and `ready` carries them. The rest is told in the page, as the desktop
    // app does.
    const services = startServices({
      home,
      ...(options.logLevel ? { logLevel: options.logLevel } : {}),
      ...(options.profile === undefined ? {} : { profile: options.profile }),
      fallbackToSandbox: false,
      openExternal: async (url) => {
        if (isSafeExternalUrl(url)) await openExternal(url)
      },
    }).then((started) => {
      if (started.fallback) {
        logger.warn('the services run on the main thread', { why: started.fallback })
      }
      return started
    })
    starting = services
    // Heard through `ready` and the bridge; a failed build must not leave it unheard meanwhile.
    services.catch(() => undefined)
    const outDir = await rendererBundle(home)
    bridge = createBridge({ services, logger })
    const site = await staticSite(outDir, {
      path: BRIDGE_PATH,
      maxBytes: BRIDGE_MAX_MESSAGE_BYTES,
    })

    const http = createServer()
    server = http
    await new Promise<void>((resolve, reject) => {
      http.once('error', reject)
      http.listen(port, host, () => {
        http.off('error', reject)
        resolve()
      })
    })
    const auth = createWebAuth(host, (http.address() as AddressInfo).port)
    const handle = route(auth, site)
    http.on('request', (request: IncomingMessage, response: ServerResponse) => {
      handle(request, response).catch((error: unknown) => {
        logger.error('a browser-mode request failed', { err: error })
        if (!response.headersSent) plain(response, 500, 'Atelier could not answer this request.')
        else response.destroy()
      })
    })
    const acceptingBridge = bridge
    http.on('upgrade', (request: IncomingMessage, socket: Duplex, head: Buffer) => {
      socket.on('error', () => socket.destroy())
      const path = new URL(request.url ?? '/', auth.origin).pathname
      if (path !== BRIDGE_PATH) refuseUpgrade(socket, '404 Not Found')
      else if (!auth.hasSession(request) || !auth.isOwnOrigin(request)) {
        logger.warn('a bridge connection without the session or from another origin was refused', {
          origin: request.headers.origin,
        })
        refuseUpgrade(socket, '403 Forbidden')
      } else acceptingBridge.accept(request, socket, head)
    })
    logger.info('the browser mode is listening', { origin: auth.origin })
    return {
      url: `${auth.origin}/?token=${auth.token}`,
      origin: auth.origin,
      close: closeServices,
      ready: services.then(() => undefined),
    }
  } catch (error) {
    await closeServices()
    throw error
  }
}
