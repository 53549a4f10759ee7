import { readdir, stat } from 'node:fs/promises'
import { join } from 'node:path'
import type { StorageFigures } from '../../src-shared/domain/settings'
import { MEDIA_DIR } from '../core'
import { LEDGER_FILE, MIRROR_FILE } from '../db'
import { sandboxDir } from '../app/paths'

/** Stats at once, in a bounded number: a media folder holds tens of thousands of files. */
const STAT_BATCH = 64

async function sizeOf(file: string): Promise<number> {
  try {
    return (await stat(file)).size
  } catch {
    // Gone between the listing and the stat (an eviction), or never there.
    return 0
  }
}

/** A SQLite file with its write-ahead log and shared memory, which hold part of it. */
async function databaseBytes(file: string): Promise<number> {
  const sizes = await Promise.all([file, `${file}-wal`, `${file}-shm`].map(sizeOf))
  return sizes.reduce((sum, size) => sum + size, 0)
}

/** Every file under a folder, asynchronously so the window's other calls are answered meanwhile. */
export async function folderBytes(folder: string): Promise<number> {
  let files: string[]
  try {
    const entries = await readdir(folder, { recursive: true, withFileTypes: true })
    files = entries.filter((e) => e.isFile()).map((e) => join(e.parentPath, e.name))
  } catch {
    return 0
  }
  let total = 0
  for (let start = 0; start < files.length; start += STAT_BATCH) {
    const sizes = await Promise.all(files.slice(start, start + STAT_BATCH).map(sizeOf))
    for (const size of sizes) total += size
  }
  return total
}

export async function storageFigures(home: string, mediaCapBytes: number): Promise<StorageFigures> {
  const [mirrorBytes, ledgerBytes, mediaBytes, sandboxBytes] = await Promise.all([
    databaseBytes(join(home, MIRROR_FILE)),
    databaseBytes(join(home, LEDGER_FILE)),
    folderBytes(join(home, MEDIA_DIR)),
    folderBytes(sandboxDir(home)),
  ])
  return { mirrorBytes, mediaBytes, mediaCapBytes, ledgerBytes, sandboxBytes }
}
