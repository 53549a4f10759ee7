import { z } from 'zod'
import type { StoredFlow } from './flow-editor'

/**
 * Remix (issue 20): the flow that made a picture, recreated exactly as it ran (its inputs set,
 * its seeds locked) from anything that knows its provenance: a run, an asset, one output of a
 * flow run on this machine, or a dropped file that carries the record inside it.
 */

const id = z.string().trim().min(1).max(200)

/** A dropped file, read by the window: base64 keeps the bytes exact over IPC. */
const droppedFile = z.strictObject({
  name: z.string().max(1000),
  // 50 MB of bytes; a picture Atelier writes is far smaller.
  base64: z
    .string()
    .min(1, 'The file is empty; drop a picture Atelier or ComfyUI saved.')
    .max(70 * 1024 * 1024, 'The file is larger than 50 MB; drop a picture, not a video.'),
})

export const remixSourceSchema = z.union([
  /** `index`: which of the run's media outputs, 0 (the first) by default. */
  z.strictObject({ runId: id, index: z.int().min(0).optional() }),
  z.strictObject({ assetId: id }),
  z.strictObject({
    flowRunId: id,
    nodeId: id,
    output: z.string().min(1).max(200),
    index: z.int().min(0),
  }),
  z.strictObject({ file: droppedFile }),
])
export type RemixSource = z.output<typeof remixSourceSchema>

/** `new`: a new flow "<name> (remix)"; `version`: the original's new state, when it is local. */
export const REMIX_AS = ['new', 'version'] as const
export type RemixAs = (typeof REMIX_AS)[number]

export const remixSchemas = {
  open: z.strictObject({ source: remixSourceSchema, as: z.enum(REMIX_AS).default('new') }),
  inspect: z.strictObject({ source: remixSourceSchema }),
}

/** Whether the picture is as it was made, or was edited since (its record shown, not trusted). */
export type RemixReading = 'intact' | 'changed'

/** A workflow-engine workflow made from a dropped ComfyUI file. */
export interface ImportedWorkflow {
  id: string
  name: string
}

export type RemixOpened =
  | {
      flow: StoredFlow
      reading: RemixReading
      /** What the person should know: edited since it was made, pictures not on this machine. */
      note?: string
    }
  | { workflow: ImportedWorkflow }

/** What a record says, for the dialog that asks how to open it. */
export interface RemixPreview {
  reading: RemixReading
  /** Set when the picture was changed since it was made. */
  warning: string | null
  flowName: string
  /** The original flow, when it is this profile's own: a remix can then be a version of it. */
  localFlow: { id: string; name: string } | null
  seed: number | null
  model: { slug: string; version: string | null } | null
  runId: string | null
  nodeLabel: string | null
  createdAt: string
}

/** What `remix.inspect` answers: the record's story, or that the file is a ComfyUI workflow. */
export type RemixInspection = RemixPreview | { workflow: true }
