export declare const STAMP_DIR: string
export declare function isFreshBuild(root: string, part: 'main' | 'preload' | 'renderer'): boolean
