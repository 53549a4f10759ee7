import { z } from 'zod'
import { channel } from '../channel'

/**
 * Downloads from the app carry their history (issue 20): one output as a file, with its
 * provenance record inside when its type can hold one (PNG, WebP, JPEG).
 */

const id = z.string().trim().min(1).max(200)
const index = z.int().min(0).max(10_000)

export const outputExportSchema = z.union([
  /** An output of a node run of a flow run on this computer (a list's item by `index`). */
  z.strictObject({ flowRunId: id, nodeId: id, output: z.string().min(1).max(200), index }),
  /** A service run's output, by its place among the run's media outputs. */
  z.strictObject({ runId: id, index }),
])
export type OutputExportRequest = z.output<typeof outputExportSchema>

/** The file to save: `<flow-slug>-<output>-<n>.<ext>`, its type and its bytes as base64. */
export interface OutputFile {
  fileName: string
  mediaType: string
  base64: string
  /** False when the file's type cannot carry a record, or its record is not known here. */
  recorded: boolean
}

export const outputsContract = {
  /** NOT_FOUND when the output is not known here; OUTPUT_UNAVAILABLE when its bytes are gone. */
  'outputs.export': channel<OutputFile>()(outputExportSchema),
} as const
