import { createRequire } from 'node:module'
import type SharpModule from 'sharp'
import type { Sharp as Image } from 'sharp'

type Sharp = typeof SharpModule

const requireHere = createRequire(import.meta.url)
let loaded: Sharp | undefined

/**
 * sharp, loaded at its first call rather than at start: loading it (libvips and its checks)
 * costs 100–400 ms, which every start paid although most starts (the sandbox's ready line, the
 * first screen, an idle sync) draw no picture. Same calls as `sharp(...)`; its static members
 * are not offered (nothing here uses them).
 */
export const sharp = ((...args: unknown[]) => {
  loaded ??= requireHere('sharp') as Sharp
  return (loaded as unknown as (...given: unknown[]) => Image)(...args)
}) as unknown as Sharp
