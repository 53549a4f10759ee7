import { readdir, stat } from 'node:fs/promises'
import { homedir } from 'node:os'
import { dirname, isAbsolute, join, resolve } from 'node:path'
import type { FolderListing } from '../../../src-shared/domain/assets'
import { AssetsError } from './errors'

/** Beyond this many sub-folders the dialog would be no help: the path field is. */
const FOLDERS_SHOWN = 5_000

const codeOf = (error: unknown) =>
  error instanceof Error && 'code' in error && typeof error.code === 'string' ? error.code : null

/**
 * A folder of this machine that an upload can read: absolute, there, a folder, listable.
 * Answers the resolved path; refuses with the reason and what to do.
 */
export async function readableFolder(path: string): Promise<string> {
  if (!isAbsolute(path)) {
    throw new AssetsError(
      'PATH_NOT_ABSOLUTE',
      `"${path}" is not a full path. Give the whole path, such as ${join(homedir(), 'Pictures')}.`,
    )
  }
  const target = resolve(path)
  let isFolder: boolean
  try {
    isFolder = (await stat(target)).isDirectory()
  } catch (error) {
    throw unreadable(target, error)
  }
  if (!isFolder) {
    throw new AssetsError(
      'NOT_A_FOLDER',
      `"${target}" is a file, not a folder. Choose the folder that holds it.`,
    )
  }
  return target
}

function unreadable(path: string, error: unknown): AssetsError {
  const code = codeOf(error)
  if (code === 'ENOENT' || code === 'ENOTDIR') {
    return new AssetsError(
      'FOLDER_MISSING',
      `There is no folder at "${path}". Check the path, or that its disk is connected.`,
    )
  }
  return new AssetsError(
    'FOLDER_UNREADABLE',
    `Atelier may not read "${path}"${code ? ` (${code})` : ''}. Choose another folder, or give Atelier permission to read it.`,
  )
}

/** The sub-folders of a folder (home when left out), for the browser mode's folder dialog. */
export async function browseFolders(path?: string): Promise<FolderListing> {
  const home = homedir()
  const target = await readableFolder(path ?? home)
  let entries
  try {
    entries = await readdir(target, { withFileTypes: true })
  } catch (error) {
    throw unreadable(target, error)
  }
  const folders = entries
    // Hidden folders are never uploaded (the scan skips them), and links are not followed.
    .filter((entry) => entry.isDirectory() && !entry.name.startsWith('.'))
    .map((entry) => entry.name)
    .sort((a, b) => a.localeCompare(b, undefined, { numeric: true, sensitivity: 'base' }))
    .slice(0, FOLDERS_SHOWN)
    .map((name) => ({ name, path: join(target, name) }))
  const parent = dirname(target)
  return { path: target, parent: parent === target ? null : parent, home, folders }
}
