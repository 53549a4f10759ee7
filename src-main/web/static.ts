import { createReadStream } from 'node:fs'
import { readFile, stat } from 'node:fs/promises'
import type { ServerResponse } from 'node:http'
import { extname, join, normalize, sep } from 'node:path'
import { contentSecurityPolicy } from '../app/policy'

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.webp': 'image/webp',
  '.ico': 'image/x-icon',
  '.woff2': 'font/woff2',
}

/**
 * Sent with every answer: the desktop window's CSP (no inline script, nothing from elsewhere,
 * never framed), no MIME sniffing, and no Referer, so that nothing of the page's address leaves it.
 */
export const SECURITY_HEADERS: Readonly<Record<string, string>> = {
  'Content-Security-Policy': contentSecurityPolicy(),
  'X-Content-Type-Options': 'nosniff',
  'X-Frame-Options': 'DENY',
  'Referrer-Policy': 'no-referrer',
  'Cross-Origin-Opener-Policy': 'same-origin',
  'Cross-Origin-Resource-Policy': 'same-origin',
  'Permissions-Policy': 'camera=(), microphone=(), geolocation=()',
}

/** The renderer's page tells its bridge module where the WebSocket is (and that there is one). */
export const BRIDGE_MARKER = 'atelier-bridge'

export function plain(response: ServerResponse, status: number, message: string): void {
  response.writeHead(status, {
    ...SECURITY_HEADERS,
    'Content-Type': 'text/plain; charset=utf-8',
    'Cache-Control': 'no-store',
  })
  response.end(`${message}\n`)
}

/**
 * The file the page's `<link rel="icon">` names, as a path of the build (`/assets/icon-….svg`),
 * or undefined when it names none inside it.
 */
function iconPath(html: string): string | undefined {
  for (const [link] of html.matchAll(/<link\b[^>]*>/gi)) {
    if (!/\brel="(?:shortcut )?icon"/i.test(link)) continue
    const href = /\bhref="\.?(\/[^"?#]+)"/i.exec(link)?.[1]
    if (href !== undefined && !href.includes('..')) return href
  }
  return undefined
}

export interface StaticSite {
  /** Answers a GET or HEAD for `pathname` (already authorized) from the build folder. */
  serve: (pathname: string, response: ServerResponse, head: boolean) => Promise<void>
}

/**
 * The built renderer, served read-only. index.html is read once and gets the bridge marker; every
 * other path must resolve inside the build folder, whatever `..` or encoded separators it holds.
 */
export async function staticSite(
  outDir: string,
  bridge: { path: string; maxBytes: number },
): Promise<StaticSite> {
  const html = await readFile(join(outDir, 'index.html'), 'utf8')
  const marker = `<meta name="${BRIDGE_MARKER}" content="${bridge.path}" data-max-bytes="${bridge.maxBytes}" />`
  if (!html.includes('<head>')) throw new Error(`The renderer build in ${outDir} has no <head>.`)
  // First in the head, so that it is there whatever order the build puts the scripts in.
  const index = Buffer.from(html.replace('<head>', `<head>\n    ${marker}`))
  // A browser asks for /favicon.ico by itself (on a page without a link to an icon, say): it
  // gets the app's icon, not a 404 in the console; no content when the build has no icon.
  const icon = iconPath(html)

  return {
    serve: async (pathname, response, head) => {
      if (pathname === '/' || pathname === '/index.html') {
        // Never cached: it names the hashed assets of this build, and the next one may differ.
        response.writeHead(200, {
          ...SECURITY_HEADERS,
          'Content-Type': TYPES['.html'],
          'Content-Length': String(index.length),
          'Cache-Control': 'no-store',
        })
        response.end(head ? undefined : index)
        return
      }
      const favicon = pathname === '/favicon.ico'
      if (favicon && icon === undefined) {
        response.writeHead(204, { ...SECURITY_HEADERS, 'Cache-Control': 'no-cache' })
        response.end()
        return
      }
      let decoded: string
      try {
        decoded = favicon && icon !== undefined ? icon : decodeURIComponent(pathname)
      } catch {
        plain(response, 400, 'This address is not valid.')
        return
      }
      const file = normalize(join(outDir, decoded))
      if (decoded.includes('\0') || !file.startsWith(outDir + sep)) {
        plain(response, 404, 'There is no such file.')
        return
      }
      const info = await stat(file).catch(() => null)
      if (!info?.isFile()) {
        plain(response, 404, 'There is no such file.')
        return
      }
      response.writeHead(200, {
        ...SECURITY_HEADERS,
        'Content-Type': TYPES[extname(file)] ?? 'application/octet-stream',
        'Content-Length': String(info.size),
        // Vite puts a content hash in every asset's name, so an asset never changes (but what
        // /favicon.ico answers may, with the next build).
        'Cache-Control':
          decoded.startsWith('/assets/') && !favicon
            ? 'private, max-age=31536000, immutable'
            : 'no-cache',
      })
      if (head) {
        response.end()
        return
      }
      const stream = createReadStream(file)
      stream.on('error', () => response.destroy())
      stream.pipe(response)
    },
  }
}
