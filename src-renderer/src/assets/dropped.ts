/**
 * Files and folders dropped on the Assets page from the desktop, turned into uploads.
 *
 * The upload engine takes a folder; a dropped folder is uploaded as a folder (its name becomes
 * an asset folder, as with "Choose folder…"), and dropped files as `uploads.start` of the folder
 * they come from with `files` naming them, one call per such folder (their asset folder: the top
 * level). A named list rather than include patterns, so that a name with `*` or `[` in it is
 * not read as a glob. Only the desktop window can do this: its preload tells a dropped File's
 * path (`window.atelierFiles`); a browser never says where a dropped file is, and the page falls
 * back to the folder chooser.
 */
import type { DroppedFiles } from '../../../src-shared/ipc/api'

export interface DroppedPaths {
  /** Full paths of the dropped folders. */
  folders: string[]
  /** The dropped files, by the folder they are in: its full path, and their names in it. */
  files: { folder: string; names: string[] }[]
  /** Dropped items whose path could not be told (made in script, or not a file). */
  unknown: number
}

/** A full path's folder and name, for either separator; null for a path with no folder. */
export function splitPath(path: string): { folder: string; name: string } | null {
  const cut = Math.max(path.lastIndexOf('/'), path.lastIndexOf('\\'))
  const name = path.slice(cut + 1)
  if (cut < 0 || name === '') return null
  let folder = path.slice(0, cut)
  // The top of a disk keeps its separator: '/' and 'C:\', not '' and 'C:'.
  if (folder === '' || /^[A-Za-z]:$/.test(folder)) folder += path.charAt(cut)
  return { folder, name }
}

/**
 * What was dropped, by path; null when this window cannot tell paths (the browser mode). Reads
 * the drop's items at once, as a DataTransfer is emptied once its event is over.
 */
export function droppedPaths(
  data: DataTransfer,
  files: DroppedFiles | undefined = window.atelierFiles,
): DroppedPaths | null {
  if (!files) return null
  const found: DroppedPaths = { folders: [], files: [], unknown: 0 }
  const byFolder = new Map<string, string[]>()
  for (const item of Array.from(data.items)) {
    if (item.kind !== 'file') continue
    const file = item.getAsFile()
    const path = file ? files.pathOf(file) : null
    const place = path === null ? null : splitPath(path)
    if (path === null || place === null) {
      found.unknown++
      continue
    }
    if (item.webkitGetAsEntry()?.isDirectory) {
      found.folders.push(path)
      continue
    }
    const names = byFolder.get(place.folder) ?? []
    byFolder.set(place.folder, names)
    if (!names.includes(place.name)) names.push(place.name)
  }
  found.files = [...byFolder].map(([folder, names]) => ({ folder, names }))
  return found
}
