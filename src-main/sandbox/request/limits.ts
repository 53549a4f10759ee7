/**
 * The limits every request body is held to before any handler sees it. The contract's text
 * states these same numbers (resources/openapi.yaml, "Limits"): change both together.
 */

/** The largest body read, in bytes (16 MiB); a larger one is answered 413 PAYLOAD_TOO_LARGE. */
export const MAX_BODY_BYTES = 16 * 1024 * 1024

/**
 * How deeply objects and arrays may nest, counting the body itself as 1: deeper is answered 422
 * `too_deep`. Far beyond any real flow or metadata, and far below what breaks SQLite's JSON
 * functions (1,000) or a recursive walk of the value.
 */
export const MAX_BODY_DEPTH = 64

/**
 * The longest string (a value or a key) in a body, in characters (1 MiB), unless the contract
 * gives a smaller `maxLength`; longer is answered 422 `too_long`.
 */
export const MAX_STRING_LENGTH = 1024 * 1024
