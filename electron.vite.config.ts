import { resolve } from 'node:path'
import { defineConfig } from 'electron-vite'
import react from '@vitejs/plugin-react'
import { RENDERER_BUILD_OPTIONS } from './src-renderer/build-options.mjs'
import { contractJson } from './scripts/build/contract.mjs'
import { buildStamp } from './scripts/build/stamp.mjs'

const root = import.meta.dirname

export default defineConfig({
  main: {
    plugins: [buildStamp({ root, part: 'main' }), contractJson({ root })],
    build: {
      // Pure-JavaScript dependencies go into the bundle: each file Node resolves, reads and
      // parses at start costs (Fastify alone is some 150 files), and a start of the sandbox spent
      // a fifth of its CPU on that. Native modules (better-sqlite3, sharp, the keyring), pino
      // (its transports run files by path in a worker) and the Ajv compilers Fastify's schema
      // controller requires by name at run time stay packages. ws is bundled too: as a package, the
      // browser mode's first thread spent some 100 ms having Node scan its CommonJS files for
      // their exports before it could print the link (its optional native helpers, bufferutil
      // and utf-8-validate, are not installed; the bundle falls back to its JavaScript, as ws does).
      externalizeDeps: {
        exclude: [
          'fastify',
          'zod',
          'commander',
          'yaml',
          'ajv',
          'ajv-formats',
          'openapi-fetch',
          'cli-progress',
          'picomatch',
          'fdir',
          'ws',
        ],
      },
      outDir: 'out/main',
      rollupOptions: {
        // Vite builds the renderer for `atelier web` only in a checkout that was never built: it
        // stays a package of its own (a development one), never copied into the app's bundle.
        external: ['vite', '@vitejs/plugin-react'],
        input: {
          index: resolve(import.meta.dirname, 'src-main/index.ts'),
          // The `atelier` command, run by bin/atelier.mjs when this build is fresh.
          cli: resolve(import.meta.dirname, 'src-main/cli/main.ts'),
          // The app's services run in a worker thread of their own, found beside the main bundle.
          'services-thread': resolve(import.meta.dirname, 'src-main/services-thread/thread.ts'),
          // The sync's page writer runs in a worker thread, found beside the main bundle.
          'sync-page-writer': resolve(import.meta.dirname, 'src-main/sync/writer/thread.ts'),
          // The app's local sandbox runs in a worker thread of its own, found beside the bundle.
          'local-sandbox': resolve(
            import.meta.dirname,
            'src-main/workspace/sandbox-thread/thread.ts',
          ),
        },
      },
    },
  },
  preload: {
    plugins: [buildStamp({ root, part: 'preload' })],
    build: {
      outDir: 'out/preload',
      // A sandboxed preload cannot load ES modules, so it is bundled as CommonJS.
      rollupOptions: {
        input: { index: resolve(import.meta.dirname, 'src-preload/index.ts') },
        output: { format: 'cjs', entryFileNames: '[name].cjs' },
      },
    },
  },
  renderer: {
    root: resolve(import.meta.dirname, 'src-renderer'),
    plugins: [react(), buildStamp({ root, part: 'renderer' })],
    // The same options as the browser mode's build (src-main/web/renderer-build.ts).
    build: {
      ...RENDERER_BUILD_OPTIONS,
      outDir: resolve(import.meta.dirname, 'out/renderer'),
      rolldownOptions: {
        ...RENDERER_BUILD_OPTIONS.rolldownOptions,
        input: { index: resolve(import.meta.dirname, 'src-renderer/index.html') },
      },
    },
  },
})
