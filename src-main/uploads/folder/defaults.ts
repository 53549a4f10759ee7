/**
 * How many files, and parts across files, a folder upload sends at once unless told otherwise.
 * A module of its own, with no imports, so that the `atelier upload` command can name them in
 * its help without loading the upload (`./upload` re-exports them).
 */
export const DEFAULT_FILE_CONCURRENCY = 4
export const DEFAULT_PARTS_IN_FLIGHT = 8
