import type { SearchErrorCode } from '../../src-shared/domain/search'
import { CodedError } from '../errors/coded'

/** Bad input to a search, with a stable code; nothing was read. */
export class SearchError extends CodedError<SearchErrorCode> {
  override readonly name = 'SearchError'
}

export function isSearchError(error: unknown): error is SearchError {
  return error instanceof SearchError
}
