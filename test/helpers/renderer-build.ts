import { createReadStream, mkdtempSync, rmSync } from 'node:fs'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { extname, join, normalize, sep } from 'node:path'
import react from '@vitejs/plugin-react'
import { build } from 'vite'

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
 * Builds the real renderer bundle into a temp dir and serves it on 127.0.0.1 (port 0), so the
 * UI tests see exactly what the app ships. ES modules do not load from file: in Chromium,
 * hence the tiny static server.
 */
export async function buildAndServeRenderer(): Promise<ServedRenderer> {
  const outDir = mkdtempSync(join(tmpdir(), 'atelier-renderer-'))
  // Vite takes React's production or development build from NODE_ENV, which vitest sets to
  // `test`: the tests must see the bundle the app ships (React's development build is several
  // times slower and measures every render). Set only while the build runs.
  const nodeEnv = process.env.NODE_ENV
  process.env.NODE_ENV = 'production'
  try {
    await build({
      root: join(root, 'src-renderer'),
      base: './',
      logLevel: 'warn',
      plugins: [react()],
      build: { outDir, emptyOutDir: true },
    })
  } finally {
    process.env.NODE_ENV = nodeEnv
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
      rmSync(outDir, { recursive: true, force: true })
    },
  }
}
