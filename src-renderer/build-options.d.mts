/** The shape of build-options.mjs: the subset of Vite's `build` options it sets. */
export interface RendererBuildOptions {
  target: string
  minify: boolean
  cssMinify: boolean
  sourcemap: boolean
  modulePreload: { polyfill: boolean }
  reportCompressedSize: boolean
  chunkSizeWarningLimit: number
  rolldownOptions: {
    treeshake: { moduleSideEffects: { test: RegExp; sideEffects: boolean }[] }
    output: {
      codeSplitting: {
        groups: { name: string; test: RegExp; tags?: '$initial'[]; priority: number }[]
      }
    }
  }
}

export declare const RENDERER_BUILD_OPTIONS: RendererBuildOptions
