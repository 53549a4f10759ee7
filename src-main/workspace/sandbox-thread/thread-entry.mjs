// The local sandbox's thread when Atelier runs from its TypeScript sources (`atelier`, the
// tests): a worker does not inherit the loader of the thread that started it, so tsx compiles
// the thread's modules here.
import { tsImport } from 'tsx/esm/api'

await tsImport('./thread.ts', import.meta.url)
