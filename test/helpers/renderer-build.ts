import { createReadStream, existsSync } from 'node:fs'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { extname, join, normalize, sep } from 'node:path'

const root = join(import.meta.dirname, '..', '..')

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
}

export interface ServedRenderer {
  url: string
  close: () => Promise<void>
}

/**
 * Serves the real renderer bundle, `out/renderer` as `npm run build` made it (test/global-setup.ts
 * builds it once per test run), on 127.0.0.1 (port 0), so the UI tests see exactly what the app
 * ships. ES modules do not load from file: in Chromium, hence the tiny static server.
 */
export async function serveBuiltRenderer(): Promise<ServedRenderer> {
  const outDir = join(root, 'out', 'renderer')
  if (!existsSync(join(outDir, 'index.html'))) {
    throw new Error(`${outDir} is missing: test/global-setup.ts builds it before the tests.`)
  }
  const server: Server = createServer((request, response) => {
    const path = new URL(request.url ?? '/', 'http://localhost').pathname
    const file = normalize(join(outDir, path === '/' ? 'index.html' : decodeURIComponent(path)))
    if (!file.startsWith(outDir + sep)) {
      response.writeHead(403).end()
      return
    }
    const stream = createReadStream(file)
    stream.on('open', () => {
      response.writeHead(200, {
        'Content-Type': TYPES[extname(file)] ?? 'application/octet-stream',
      })
      stream.pipe(response)
    })
    stream.on('error', () => {
      response.writeHead(404).end()
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}/`,
    close: async () => {
      server.closeAllConnections()
      await new Promise<void>((resolve) => {
        server.close(() => {
          resolve()
        })
      })
    },
  }
}
