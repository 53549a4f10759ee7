import type {
  Model,
  ModelExample,
  ModelFaqEntry,
  ModelInput,
  ModelOutput,
  ModelPricing,
  ModelRelatedLink,
} from '../../../src-shared/api'

/** A catalog model: a `Model` record whose embedded lists are always present. */
export type CatalogModel = Model & {
  inputs: ModelInput[]
  outputs: ModelOutput[]
  examples: ModelExample[]
  faq_entries: ModelFaqEntry[]
  pricing: ModelPricing[]
  related_links: ModelRelatedLink[]
}

export type LogLevelCode = 'debug' | 'info' | 'warning' | 'error'

export interface ModelLog {
  level_code: LogLevelCode
  message: string
}

/** One output file of a run. */
export interface ModelFile {
  /** The name of the model output this file belongs to (e.g. `image`, `video`). */
  output: string
  bytes: Buffer
  content_type: string
  width?: number
  height?: number
  /** Animated outputs only: total play time of one loop. */
  duration_ms?: number
  /** Animated outputs only: number of frames. */
  frames?: number
}

/** What the run measured, for pricing. */
export interface ModelMetrics {
  /** Total megapixels (width × height / 1e6) of all output images or video frames sizes. */
  megapixels?: number
  /** Total seconds of output video. */
  seconds?: number
}

export interface ModelSuccess {
  ok: true
  files: ModelFile[]
  /** Text output (e.g. a caption). */
  text?: string
  logs: ModelLog[]
  metrics: ModelMetrics
  /** Nominal latency of the run in milliseconds: the server should make the run take this long. */
  workMs: number
}

export interface ModelFailure {
  ok: false
  /** e.g. INPUT_VALIDATION_FAILED, INPUT_FETCH_FAILED, MODEL_ERROR, MODEL_UNAVAILABLE. */
  failure_code: string
  /** preprocess, inference or postprocess. */
  failure_stage: string
  failure_message: string
  logs: ModelLog[]
  /** Nominal time spent before the failure, in milliseconds. */
  workMs: number
}

export type ModelResult = ModelSuccess | ModelFailure

export interface RunOptions {
  /** The run's seed; an explicit `seed` input takes precedence. */
  seed: number
  /**
   * Loads an image input that is not a `data:` URL (an asset id, an asset or presigned URL...).
   * Without it, only `data:` URLs can be used.
   */
  fetchImage?: (ref: string) => Promise<Buffer>
  /** Failure probability of `atelier/flaky` when its `failure_rate` input is left out. Default 0.3. */
  failureRate?: number
  /** Random source in [0, 1) for simulated failures. Default Math.random. */
  random?: () => number
}

export interface InputProblem {
  /** The input name, or `input` when the input as a whole is wrong. */
  field: string
  /** required, unknown, type, range, length, enum, pattern or image_size. */
  code: string
  /** A plain-words explanation, suitable for `failure_message`. */
  message: string
}

export interface InputValidation {
  /** The known inputs, with defaults applied (`use_default` inputs left out get default_value). */
  input: Record<string, unknown>
  problems: InputProblem[]
}

export interface RunCost {
  /** Decimal credits, at least four decimals, e.g. `0.0400` or `0.010486`. */
  cost: string
  /** The same amount in integer micro-credits (1 credit = 1,000,000 micro). */
  micro: number
}
