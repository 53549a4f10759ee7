/** Why a picture's provenance could not be written: a stable code and what to do about it. */
export type ProvenanceErrorCode =
  'PROVENANCE_UNSUPPORTED_TYPE' | 'PROVENANCE_MALFORMED_FILE' | 'PROVENANCE_TOO_LARGE'

export class ProvenanceError extends Error {
  constructor(
    readonly code: ProvenanceErrorCode,
    message: string,
  ) {
    super(message)
    this.name = 'ProvenanceError'
  }
}
