/**
 * A file's media type from its first bytes (the name can lie): what provenance needs to choose
 * a container, and to name a file it cannot write into. `file-type`, installed, is async only.
 */
const ascii = (bytes: Uint8Array, from: number, to: number) =>
  String.fromCharCode(...bytes.subarray(from, to))

export function mediaTypeOf(bytes: Uint8Array): string | null {
  if (bytes.length >= 8 && bytes[0] === 0x89 && ascii(bytes, 1, 4) === 'PNG') return 'image/png'
  if (bytes.length >= 3 && bytes[0] === 0xff && bytes[1] === 0xd8 && bytes[2] === 0xff) {
    return 'image/jpeg'
  }
  if (ascii(bytes, 0, 4) === 'RIFF' && ascii(bytes, 8, 12) === 'WEBP') return 'image/webp'
  if (ascii(bytes, 0, 4) === 'RIFF' && ascii(bytes, 8, 12) === 'AVI ') return 'video/x-msvideo'
  if (ascii(bytes, 0, 6) === 'GIF87a' || ascii(bytes, 0, 6) === 'GIF89a') return 'image/gif'
  if (ascii(bytes, 4, 8) === 'ftyp') {
    const brand = ascii(bytes, 8, 12)
    if (brand === 'avif' || brand === 'avis') return 'image/avif'
    if (brand === 'heic' || brand === 'heix' || brand === 'mif1') return 'image/heic'
    if (brand === 'qt  ') return 'video/quicktime'
    return 'video/mp4'
  }
  if (
    bytes.length >= 4 &&
    bytes[0] === 0x1a &&
    bytes[1] === 0x45 &&
    bytes[2] === 0xdf &&
    bytes[3] === 0xa3
  ) {
    return 'video/webm'
  }
  if (ascii(bytes, 0, 4) === 'II*\0' || ascii(bytes, 0, 4) === 'MM\0*') return 'image/tiff'
  // "BM" alone starts plenty of text files: the DIB header's size must be one BMP knows too.
  if (ascii(bytes, 0, 2) === 'BM' && [12, 40, 52, 56, 108, 124].includes(bytes[14] ?? 0)) {
    return 'image/bmp'
  }
  if (ascii(bytes, 0, 5) === '%PDF-') return 'application/pdf'
  return null
}

/** A media type in words for a message: "a GIF file", "a MP4 video", "an unknown kind of file". */
export function nameOfType(mediaType: string | null): string {
  if (mediaType === null) return 'of a kind that is not recognised'
  const [kind, sub] = mediaType.split('/') as [string, string]
  const name = sub.replace(/^x-/, '').replace('quicktime', 'QuickTime').toUpperCase()
  const what = kind === 'video' ? 'video' : 'file'
  return `${/^[AEFHILMNORSX]/.test(name) ? 'an' : 'a'} ${name} ${what}`
}
