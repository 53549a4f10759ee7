/**
 * The window's security policy as plain functions, free of Electron so that tests run them
 * under Node and the browser mode can share them.
 */

export interface CspOptions {
  /** The Vite dev server needs inline styles and a WebSocket for hot reload. */
  dev?: { origin: string }
}

export function contentSecurityPolicy(options: CspOptions = {}): string {
  const dev = options.dev
  const wsOrigin = dev?.origin.replace(/^http/, 'ws')
  const directives: Record<string, string[]> = {
    'default-src': ["'self'"],
    'script-src': ["'self'"],
    'style-src': dev ? ["'self'", "'unsafe-inline'"] : ["'self'"],
    'img-src': ["'self'", 'data:', 'blob:'],
    'media-src': ["'self'", 'blob:'],
    'font-src': ["'self'"],
    'connect-src': dev && wsOrigin ? ["'self'", wsOrigin] : ["'self'"],
    'object-src': ["'none'"],
    'base-uri': ["'none'"],
    'form-action': ["'none'"],
    'frame-ancestors': ["'none'"],
    'frame-src': ["'none'"],
  }
  return Object.entries(directives)
    .map(([name, values]) => `${name} ${values.join(' ')}`)
    .join('; ')
}

function parse(url: string): URL | undefined {
  try {
    return new URL(url)
  } catch {
    return undefined
  }
}

/** Only web links leave the app; `file:`, `javascript:`, custom schemes and malformed URLs never do. */
export function isSafeExternalUrl(url: string): boolean {
  const parsed = parse(url)
  return parsed !== undefined && (parsed.protocol === 'https:' || parsed.protocol === 'http:')
}

/** Same document, compared without the fragment (a hash change is not a navigation away). */
function sameDocument(a: URL, b: URL): boolean {
  return a.origin === b.origin && a.pathname === b.pathname && a.protocol === b.protocol
}

/**
 * The app is a single page: the only navigation allowed is a reload of the app itself.
 * Anything else (another origin, `file:` paths, `javascript:`) is refused.
 */
export function isAllowedNavigation(targetUrl: string, appUrl: string): boolean {
  const target = parse(targetUrl)
  const app = parse(appUrl)
  if (!target || !app) return false
  if (target.protocol !== 'http:' && target.protocol !== 'https:' && target.protocol !== 'file:') {
    return false
  }
  return sameDocument(target, app)
}

/**
 * An IPC call is accepted only from the main frame of the app's own document: never from an
 * iframe, and never from a page that somehow got loaded from elsewhere.
 */
export function isTrustedSender(
  sender: { url: string; isMainFrame: boolean },
  appUrl: string,
): boolean {
  if (!sender.isMainFrame) return false
  const frame = parse(sender.url)
  const app = parse(appUrl)
  return frame !== undefined && app !== undefined && sameDocument(frame, app)
}
