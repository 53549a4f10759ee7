import type { SearchErrorCode } from '../../src-shared/domain/search'

/** Bad input to a search, with a stable code; nothing was read. */
export class SearchError extends Error {
  constructor(
    readonly code: SearchErrorCode,
    message: string,
  ) {
    super(message)
    this.name = 'SearchError'
  }
}

export function isSearchError(error: unknown): error is SearchError {
  return error instanceof SearchError
}
