/**
 * How the renderer bundle is built, the one definition both builds use: the desktop app's
 * (`electron.vite.config.ts`, renderer) and the browser mode's (`src-main/web/renderer-build.ts`),
 * so that both ship the same files. Vite's `build` options, as plain data. JavaScript with its
 * types beside it (build-options.d.mts): both TypeScript projects may then import it (the Node
 * one lists no file of this folder), and neither needs Vite's types here (they would bring
 * Node's into the page's project); the builds that spread it check it against Vite's.
 *
 * - Minified (electron-vite leaves the renderer unminified unless told).
 * - ES2022 syntax: Electron's Chromium and every browser the browser mode is opened in run it
 *   as written (the same as Vite's own default, which electron-vite would replace with
 *   Electron's Chrome version, too new for some browsers).
 * - No module-preload polyfill: every target has `<link rel="modulepreload">`.
 * - Chunks: the start screen (the shell and the flow list) loads the entry, the app code it
 *   shares with later screens, and two vendor chunks; the flow editor and every other section
 *   are chunks of their own, loaded on demand (src/shell/lazy.tsx). Named vendor chunks change
 *   only when those packages do, so a rebuilt app keeps them cached:
 *   - `react`: React and ReactDOM, what every screen needs;
 *   - `vendor`: the other packages the start screen imports (zustand, zundo, zod through the
 *     shared domain types, cmdk for the command palette);
 *   - `flow-graph`: the editor's graph libraries (@xyflow with its d3 parts, dagre);
 *   - `virtual`: the virtualized lists the Assets, Runs and Evaluations sections share.
 *   Groups match JavaScript only: a stylesheet of a package stays where the app imports it
 *   (src/stylesheets.ts loads them all with the start screen).
 * - dagre is declared free of side effects (it is: a minified library that only defines
 *   functions, but its package.json does not say so). Otherwise the store's import of the flow
 *   document's index, which re-exports the auto layout, would keep it in the start screen.
 */

/** Modules of these packages (a regular expression's alternatives), JavaScript only. */
const packages = (/** @type {string} */ names) =>
  new RegExp(`[\\\\/]node_modules[\\\\/](?:${names})[\\\\/].*\\.[cm]?js$`)

/** @type {import('./build-options.d.mts').RendererBuildOptions} */
export const RENDERER_BUILD_OPTIONS = {
  target: 'es2022',
  minify: true,
  cssMinify: true,
  sourcemap: false,
  modulePreload: { polyfill: false },
  reportCompressedSize: true,
  // The flow editor's graph libraries, the largest chunk, are about 230 kB minified.
  chunkSizeWarningLimit: 300,
  rolldownOptions: {
    treeshake: {
      moduleSideEffects: [{ test: /[\\/]node_modules[\\/]@dagrejs[\\/]/, sideEffects: false }],
    },
    output: {
      codeSplitting: {
        groups: [
          { name: 'react', test: packages('react|react-dom|scheduler'), priority: 30 },
          { name: 'vendor', test: packages('.+?'), tags: ['$initial'], priority: 20 },
          {
            name: 'flow-graph',
            test: packages('@xyflow|d3-[a-z]+|@dagrejs|classcat'),
            priority: 10,
          },
          { name: 'virtual', test: packages('@tanstack'), priority: 10 },
        ],
      },
    },
  },
}
