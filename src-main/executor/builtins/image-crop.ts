import { sharp } from '../../native'
import { type BuiltinStep } from './context'
import { BuiltinError } from './errors'
import { imageOf, storeImage } from './media'
import { describeNode } from './ports'

/**
 * `image_crop`: cuts the `width` × `height` rectangle whose top-left corner is at `x`, `y` out of
 * `image` (as it is shown, EXIF orientation applied), as a PNG. A rectangle reaching outside
 * the image fails with CROP_OUT_OF_BOUNDS instead of being clipped: the service refuses it too.
 */

const SIZE = { min: 1, max: 4096 }
const OFFSET = { min: 0, max: 4095 }

export const runImageCrop: BuiltinStep = async (run) => {
  const left = run.ports.integer('x', { default: 0, range: OFFSET })
  const top = run.ports.integer('y', { default: 0, range: OFFSET })
  const width = run.ports.integer('width', { required: true, range: SIZE })
  const height = run.ports.integer('height', { required: true, range: SIZE })
  const source = await imageOf(run, 'image')
  if (left + width > source.width || top + height > source.height) {
    throw new BuiltinError(
      'CROP_OUT_OF_BOUNDS',
      `Node ${describeNode(run.node)}: the ${width}×${height} rectangle at ${left}, ${top} reaches outside the ${source.width}×${source.height} image; make it smaller or move it.`,
    )
  }
  const png = await sharp(source.path)
    .autoOrient()
    .extract({ left, top, width, height })
    .png()
    .toBuffer()
  const image = await storeImage(run, png, 'image/png', source.ref)
  return { outputs: { image }, costMicro: 0 }
}
