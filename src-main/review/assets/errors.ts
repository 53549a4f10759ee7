import { CodedError } from '../../errors/coded'

/** Stable codes of the asset manager; the renderer switches on these, never on messages. */
export type AssetsErrorCode =
  | 'NOT_FOUND'
  | 'ASSETS_INVALID_CURSOR'
  | 'FOLDER_NAME_TAKEN'
  | 'FOLDER_NOT_EMPTY'
  | 'FOLDER_INTO_ITSELF'
  | 'UNDO_EXPIRED'
  | 'UPLOAD_NOT_FOUND'
  | 'UPLOAD_WATCHED'
  | 'UPLOAD_NOT_PAUSED'
  | 'UPLOAD_RUNNING'
  | 'PATH_NOT_ABSOLUTE'
  | 'FOLDER_MISSING'
  | 'NOT_A_FOLDER'
  | 'FOLDER_UNREADABLE'
  | 'WATCH_NOT_FOUND'
  | 'WATCH_EXISTS'
  | 'SEARCH_INVALID_QUERY'
  | 'SEARCH_INVALID_CURSOR'

/** A refusal with a stable code and a message that says what to do; nothing was changed. */
export class AssetsError extends CodedError<AssetsErrorCode> {
  override readonly name = 'AssetsError'
}

export function isAssetsError(error: unknown): error is AssetsError {
  return error instanceof AssetsError
}
