/**
 * Names that operating systems, file managers and archivers leave in folders: never the user's
 * media, and uploading them would only clutter the asset library. Compared in lower case, as
 * Windows and macOS folders usually ignore case.
 */
const SYSTEM_NAMES = new Set([
  '.ds_store',
  '.spotlight-v100',
  '.trashes',
  '.fseventsd',
  '.temporaryitems',
  'icon\r',
  '__macosx',
  'thumbs.db',
  'ehthumbs.db',
  'desktop.ini',
  '$recycle.bin',
  'system volume information',
])

/**
 * Why an entry is left out by its name alone: 'system' for the names above and macOS's `._*`
 * AppleDouble files (resource forks copied to other disks), 'hidden' for any other dot name
 * (the Unix convention; Windows' hidden attribute is not read).
 */
export function skipReasonOfName(name: string): 'system' | 'hidden' | null {
  if (SYSTEM_NAMES.has(name.toLowerCase()) || name.startsWith('._')) return 'system'
  if (name.startsWith('.')) return 'hidden'
  return null
}
