import type { Plugin } from 'vite'
export declare const CONTRACT_JSON: string
export declare function contractJson(options: { root: string }): Plugin
