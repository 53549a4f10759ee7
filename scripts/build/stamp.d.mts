import type { Plugin } from 'vite'
export declare function buildStamp(options: {
  root: string
  part: 'main' | 'preload' | 'renderer'
}): Plugin
