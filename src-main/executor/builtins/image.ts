import { local, type BuiltinStep } from './context'
import { mediaInput } from './media'

/**
 * `image`: the image in `value`, on `image`. A media reference passes through untouched; a data:
 * URL, an asset id, an http(s) URL or a file becomes a reference to bytes in the media store, so
 * the nodes it feeds (and the cache) see it by content.
 */
export const runImage: BuiltinStep = async (run) => {
  const image = await mediaInput(run, 'value', 'image', { required: true })
  return local({ image })
}
