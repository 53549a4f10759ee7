import { z } from 'zod'

/**
 * The provenance record Atelier writes inside every picture it puts on the user's disk (issue
 * 20): enough to recreate the flow exactly as it ran and to run it again, without the database
 * that made it. PNG carries it as an iTXt chunk, WebP and JPEG as XMP.
 *
 * What it never carries: a key, a presigned URL, a local path. Media is named by content
 * (sha256) and, where there is one, the service's asset id, so a record is safe to share.
 *
 * `output.sha256` is the output's sha256 as the service made it. A reader takes the record out
 * of the file again and hashes what is left: a different hash means the picture was edited after
 * it was made ("changed since it was made"), and its record is shown but not trusted.
 */
export const PROVENANCE_FORMAT = 'atelier.provenance'
export const PROVENANCE_VERSION = 1
/** The PNG iTXt keyword and the XMP property the record is stored under. */
export const PROVENANCE_KEYWORD = 'atelier:provenance'

const sha256 = z.string().regex(/^[0-9a-f]{64}$/, 'a lowercase hex sha256')

/** A media value inside a record's inputs: content, never an address. */
export const provenanceMediaSchema = z.strictObject({
  media: z.strictObject({
    sha256,
    asset_id: z.string().nullable(),
    media_type: z.string().nullable(),
  }),
})
export type ProvenanceMedia = z.output<typeof provenanceMediaSchema>

export const provenanceRecordSchema = z.strictObject({
  format: z.literal(PROVENANCE_FORMAT),
  version: z.literal(PROVENANCE_VERSION),
  /** The whole flow document as it ran (a flow file; `parseFlowDocument` reads it). */
  flow: z.record(z.string(), z.unknown()),
  flow_version: z.int().nullable(),
  /** The node that made this output; null for a run made outside a flow. */
  node: z.strictObject({ id: z.string(), label: z.string() }).nullable(),
  /** The node's inputs as sent (seeds included), media as `ProvenanceMedia`. */
  node_inputs: z.record(z.string(), z.unknown()),
  /** The flow run's inputs, media as `ProvenanceMedia`. */
  flow_inputs: z.record(z.string(), z.unknown()),
  /** The service's run that made the output. */
  run_id: z.string().nullable(),
  /** The local node run: its flow run, node and attempt. */
  node_run: z
    .strictObject({ flow_run_id: z.string(), node_id: z.string(), attempt: z.int().min(1) })
    .nullable(),
  model: z.strictObject({ slug: z.string(), version: z.string().nullable() }).nullable(),
  /** The seed the run used, when it had one (the first seed input, by name in `node_inputs`). */
  seed: z.int().nullable(),
  /**
   * Every seed the flow run used, by node id then input name, drawn or given: what recreating
   * the flow needs to make the same pictures again (the record's own node is one of them).
   */
  seeds: z.record(z.string(), z.record(z.string(), z.int())),
  /** Credits, as the service writes money: a decimal string. */
  cost: z.string().nullable(),
  created_at: z.string(),
  evaluation: z
    .strictObject({
      id: z.string(),
      verdict: z.string().nullable(),
      score: z.number().nullable(),
    })
    .nullable(),
  /** Which output this file is, and its bytes as the service made them. */
  output: z.strictObject({
    name: z.string(),
    index: z.int().min(0),
    sha256,
    media_type: z.string(),
  }),
})
export type ProvenanceRecord = z.output<typeof provenanceRecordSchema>

/**
 * What reading a file's provenance found:
 * - `none`: the file carries no record (of ours or ComfyUI's);
 * - `foreign`: it carries a record that is not Atelier's, or of a newer format version;
 * - `damaged`: it carries Atelier's record, but the record does not parse;
 * - `changed`: the record is whole but the picture was edited after it was made;
 * - `intact`: the record is whole and the picture is as it was made.
 */
export type ProvenanceReading =
  | { state: 'none'; message: string }
  | { state: 'foreign'; message: string }
  | { state: 'damaged'; message: string }
  | { state: 'changed'; message: string; record: ProvenanceRecord }
  | { state: 'intact'; record: ProvenanceRecord }
