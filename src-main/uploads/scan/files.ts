import { constants, type Stats } from 'node:fs'
import { open, type FileHandle } from 'node:fs/promises'
import { notAFileError } from './errors'

/**
 * O_NONBLOCK so that opening a FIFO (say a file replaced by one since the scan) returns at once
 * instead of holding a thread-pool thread until some writer appears; regular files read as
 * usual with it. Windows has no FIFOs and no such flag.
 */
export const READ_FLAGS =
  process.platform === 'win32' ? constants.O_RDONLY : constants.O_RDONLY | constants.O_NONBLOCK

function kindOf(stats: Stats): string {
  if (stats.isDirectory()) return 'a folder'
  if (stats.isFIFO()) return 'a FIFO (named pipe)'
  if (stats.isSocket()) return 'a socket'
  if (stats.isCharacterDevice() || stats.isBlockDevice()) return 'a device'
  return 'not a regular file'
}

/**
 * Opens a regular file for reading and stats that same descriptor, so what is read is what was
 * stat'ed even if the path is replaced meanwhile. Anything but a regular file is refused with
 * NOT_A_FILE; other failures are the system's errors, for the caller to describe.
 */
export async function openRegularFile(path: string): Promise<{ handle: FileHandle; stats: Stats }> {
  const handle = await open(path, READ_FLAGS)
  try {
    const stats = await handle.stat()
    if (!stats.isFile()) throw notAFileError(path, kindOf(stats))
    return { handle, stats }
  } catch (error) {
    await handle.close()
    throw error
  }
}
