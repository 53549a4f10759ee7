import { sharp } from '../../native'
import { type BuiltinStep } from './context'
import { imageOf, storeImage } from './media'

/**
 * `image_resize`: scales `image` to `width` × `height` (1 to 4096, 512 by default): `contain`
 * (the default) keeps the whole picture inside on a transparent ground, `cover` fills and crops
 * the overflow, `fill` stretches. As the service's built-in, the result is a PNG, whatever came
 * in; it goes into the media store and out as a reference named by its sha256.
 */

export const FITS = ['contain', 'cover', 'fill'] as const
const SIZE = { min: 1, max: 4096 }

export const runImageResize: BuiltinStep = async (run) => {
  const width = run.ports.integer('width', { default: 512, range: SIZE })
  const height = run.ports.integer('height', { default: 512, range: SIZE })
  const fit = run.ports.choice('fit', FITS, { default: 'contain' })
  const source = await imageOf(run, 'image')
  const png = await sharp(source.path)
    .autoOrient()
    .resize({ width, height, fit, background: { r: 0, g: 0, b: 0, alpha: 0 } })
    .png()
    .toBuffer()
  const image = await storeImage(run, png, 'image/png', source.ref)
  return { outputs: { image }, costMicro: 0 }
}
