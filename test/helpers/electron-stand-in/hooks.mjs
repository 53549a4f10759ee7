// Module customization hooks (node:module `register`) for the stand-in's child process: the
// bare specifier `electron`, which the built main bundle imports, resolves to the stand-in.
// Nothing else is touched, so the rest of the bundle (its chunks, better-sqlite3, pino, the
// services thread's entry) resolves exactly as Node's own ESM loader resolves it — the same
// loader Electron uses for an ESM main — and a bundle that only loads under a bundler-aware
// loader (tsx, vite-node) fails here as it would in the app.
//
// The sandboxed preload is CommonJS but does not go through these hooks: a sandboxed preload's
// `require` is not Node's, so the stand-in hands it a require of its own (see runtime.mjs).

const electron = new URL('./electron.mjs', import.meta.url).href

export function resolve(specifier, context, nextResolve) {
  if (specifier === 'electron') return { url: electron, shortCircuit: true }
  return nextResolve(specifier, context)
}
