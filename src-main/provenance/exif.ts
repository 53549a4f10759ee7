/**
 * Text tags of an EXIF block's first directory (IFD0). ComfyUI saves WebP with its graph there:
 * Model (0x0110) holds `prompt:{…}`, Make (0x010f) and the tags below it `workflow:{…}`, each
 * as `key:value`. Enough of TIFF (from the spec) to read those; nothing else is needed.
 */
const ASCII = 2
const UNDEFINED = 7

export function readExifText(block: Uint8Array): Record<string, string> {
  let tiff = block
  if (new TextDecoder('latin1').decode(tiff.subarray(0, 6)) === 'Exif\0\0') tiff = tiff.subarray(6)
  if (tiff.length < 8) return {}
  const order = new TextDecoder('latin1').decode(tiff.subarray(0, 2))
  if (order !== 'II' && order !== 'MM') return {}
  const little = order === 'II'
  const data = new DataView(tiff.buffer, tiff.byteOffset, tiff.byteLength)
  const found: Record<string, string> = {}
  try {
    const ifd = data.getUint32(4, little)
    const count = data.getUint16(ifd, little)
    for (let i = 0; i < count; i++) {
      const entry = ifd + 2 + i * 12
      const type = data.getUint16(entry + 2, little)
      const length = data.getUint32(entry + 4, little)
      if (type !== ASCII && type !== UNDEFINED) continue
      const offset = length <= 4 ? entry + 8 : data.getUint32(entry + 8, little)
      if (offset + length > tiff.length) continue
      const text = new TextDecoder()
        .decode(tiff.subarray(offset, offset + length))
        .replace(/\0+$/, '')
      const match = /^([A-Za-z_][\w-]*):([\s\S]*)$/.exec(text)
      if (match?.[1] !== undefined) found[match[1]] = match[2] ?? ''
    }
  } catch {
    // a directory that runs past the block: keep what was read
  }
  return found
}
