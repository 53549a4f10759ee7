/**
 * Stable codes of what scanning a folder, sniffing or hashing a file can fail at. Callers switch
 * on the code; the message is for the person and says what to do.
 */
export type UploadScanErrorCode =
  /** Nothing exists at the folder's path (a typo, a disk that is not connected). */
  | 'FOLDER_MISSING'
  /** The path exists but is not a folder (a file, or a file on the way to it). */
  | 'NOT_A_FOLDER'
  /** The folder exists but cannot be listed (permissions, a disk error). */
  | 'FOLDER_UNREADABLE'
  /** The file is gone: moved or deleted since it was listed. */
  | 'FILE_MISSING'
  /** The path is not a regular file (a folder, a FIFO, a device): it is never read. */
  | 'NOT_A_FILE'
  /** The file exists but could not be read (permissions, a disk error). */
  | 'FILE_UNREADABLE'
  /** The file's size, mtime or bytes changed while it was hashed: hash it again. */
  | 'FILE_CHANGED'
  /** An include or exclude pattern is not a usable glob. */
  | 'INVALID_PATTERN'
  /** The caller's signal was aborted. */
  | 'ABORTED'

export class UploadScanError extends Error {
  override readonly name = 'UploadScanError'

  constructor(
    readonly code: UploadScanErrorCode,
    message: string,
    /** The file or folder concerned, as the caller gave it. */
    readonly path?: string,
    /** The operating system's code behind the failure (EACCES, ENOENT...), when there was one. */
    readonly systemCode?: string,
    options?: ErrorOptions,
  ) {
    super(message, options)
  }
}

export function isUploadScanError(value: unknown): value is UploadScanError {
  return value instanceof UploadScanError
}

export function systemCodeOf(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code
  return typeof code === 'string' ? code : undefined
}

/** Why a file or folder could not be read, and what the person can do about it. */
export function explainSystemCode(code: string | undefined): { reason: string; advice: string } {
  switch (code) {
    case 'EACCES':
    case 'EPERM':
      return {
        reason: 'permission denied',
        advice: 'Give your user read access to it, or exclude it.',
      }
    case 'ENOENT':
      return {
        reason: 'it was moved or deleted during the scan',
        advice: 'Scan the folder again if it should be uploaded.',
      }
    case 'ENOTDIR':
      return {
        reason: 'a folder on its path was replaced by a file during the scan',
        advice: 'Scan the folder again.',
      }
    case 'ENAMETOOLONG':
      return {
        reason: 'its path is longer than the system allows',
        advice:
          'Move it closer to the top of the folder, or shorten the names of the folders above it.',
      }
    case 'ELOOP':
      return {
        reason: 'its path goes through too many symbolic links',
        advice:
          'Scan the folder again; links are not followed, so replace them with the real folders.',
      }
    case 'EIO':
      return {
        reason: 'the disk reported a read error',
        advice: 'Check the disk, or copy the files to another disk and scan that copy.',
      }
    case 'EMFILE':
    case 'ENFILE':
      return {
        reason: 'too many files are open on this computer',
        advice: 'Close other programs and try again.',
      }
    case 'EBUSY':
      return {
        reason: 'another program holds it locked',
        advice: 'Close that program and try again.',
      }
    default:
      return {
        reason: `the system refused to read it (${code ?? 'unknown error'})`,
        advice: 'Check that Atelier may read it, then try again.',
      }
  }
}

/** A failure to open or read one file, as an error for callers of `sniffMedia` or `hashFile`. */
export function fileError(path: string, error: unknown): UploadScanError {
  if (isUploadScanError(error)) return error
  const systemCode = systemCodeOf(error)
  if (systemCode === 'ENOENT' || systemCode === 'ENOTDIR') {
    return new UploadScanError(
      'FILE_MISSING',
      `${path} is no longer there: it was moved or deleted since it was listed. Scan the folder again.`,
      path,
      systemCode,
      { cause: error },
    )
  }
  if (systemCode === 'EISDIR') return notAFileError(path, 'a folder')
  const { reason, advice } = explainSystemCode(systemCode)
  return new UploadScanError(
    'FILE_UNREADABLE',
    `${path} could not be read: ${reason}. ${advice}`,
    path,
    systemCode,
    { cause: error },
  )
}

export function notAFileError(path: string, what: string): UploadScanError {
  return new UploadScanError(
    'NOT_A_FILE',
    `${path} is ${what}, not a regular file, so it is not read. Leave it out of the upload.`,
    path,
  )
}

/** The folder to scan could not be used at all. */
export function folderError(path: string, error: unknown): UploadScanError {
  const systemCode = systemCodeOf(error)
  if (systemCode === 'ENOENT') {
    return new UploadScanError(
      'FOLDER_MISSING',
      `There is no folder at ${path}. Check the path, and that its disk is connected.`,
      path,
      systemCode,
      { cause: error },
    )
  }
  if (systemCode === 'ENOTDIR') {
    return new UploadScanError(
      'NOT_A_FOLDER',
      `${path} is not a folder: a part of that path is a file. Check the path.`,
      path,
      systemCode,
      { cause: error },
    )
  }
  const denied = systemCode === 'EACCES' || systemCode === 'EPERM'
  const { reason, advice } = explainSystemCode(systemCode)
  return new UploadScanError(
    'FOLDER_UNREADABLE',
    `The folder ${path} cannot be read: ${reason}. ${denied ? 'Give your user read access to it, or pick another folder.' : advice}`,
    path,
    systemCode,
    { cause: error },
  )
}

export function abortedError(signal: AbortSignal, what: string): UploadScanError {
  return new UploadScanError(
    'ABORTED',
    `The ${what} was stopped before it finished. Start it again to finish it.`,
    undefined,
    undefined,
    { cause: signal.reason },
  )
}
