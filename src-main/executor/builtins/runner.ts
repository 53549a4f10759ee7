import type { FlowNode } from '../../../src-shared/api'
import type { MediaStore } from '../../media-store'
import type { ServiceClient } from '../../service'
import type { NodeOutcome, NodeRunContext, NodeRunner, PortValue } from '../types'
import { runBranch } from './branch'
import { runCompare } from './compare'
import {
  builtinRun,
  type BuiltinDeps,
  type BuiltinStep,
  type EvaluationPolling,
  type EvaluationPrices,
} from './context'
import { BuiltinError, settleError, throwIfAborted } from './errors'
import { estimateEvaluation, EVALUATION_PRICE_MICRO, runEvaluate } from './evaluate'
import { runImage } from './image'
import { runImageCrop } from './image-crop'
import { runImageResize } from './image-resize'
import { runNumber } from './number'
import { runPickFromList } from './pick-from-list'
import { runPromptTemplate } from './prompt-template'
import { runSaveToAssets } from './save-to-assets'
import { runText } from './text'
import { describeNode } from './ports'

/** The built-ins this runner performs, by `builtin_node_code` (GET /v1/builtin-nodes). */
const STEPS: Readonly<Record<string, BuiltinStep>> = {
  text: runText,
  number: runNumber,
  image: runImage,
  prompt_template: runPromptTemplate,
  image_resize: runImageResize,
  image_crop: runImageCrop,
  pick_from_list: runPickFromList,
  compare: runCompare,
  branch: runBranch,
  evaluate: runEvaluate,
  save_to_assets: runSaveToAssets,
}

export const BUILTIN_CODES: readonly string[] = Object.keys(STEPS)

export interface BuiltinRunnerOptions {
  /** Where images the nodes make (and media given as files, URLs or data: URLs) are kept. */
  media: MediaStore
  /** For evaluate, save to assets and asset ids; without it those fail with SERVICE_REQUIRED. */
  service?: ServiceClient | null
  /** For the presigned storage PUTs of uploads; the global fetch by default. */
  fetch?: typeof fetch
  polling?: Partial<EvaluationPolling>
  /** Micro-credits per evaluation, for the estimate; `EVALUATION_PRICE_MICRO` by default. */
  evaluationPriceMicro?: Partial<EvaluationPrices>
  /** Where "Save to assets" finds the record it writes into a picture; none: saved as made. */
  recordOf?: BuiltinDeps['recordOf']
}

const DEFAULT_POLLING: EvaluationPolling = {
  initialMs: 250,
  factor: 1.5,
  maxMs: 3_000,
  timeoutMs: 10 * 60_000,
}

function checkPolling(polling: EvaluationPolling): EvaluationPolling {
  const { initialMs, factor, maxMs, timeoutMs } = polling
  const ok =
    Number.isFinite(initialMs) &&
    initialMs > 0 &&
    Number.isFinite(factor) &&
    factor >= 1 &&
    Number.isFinite(maxMs) &&
    maxMs >= initialMs &&
    Number.isFinite(timeoutMs) &&
    timeoutMs > 0
  if (!ok) {
    throw new TypeError(
      'polling needs initialMs > 0, factor ≥ 1, maxMs ≥ initialMs and timeoutMs > 0.',
    )
  }
  return polling
}

/**
 * Runs the nodes of `type_code: builtin` on this machine, with the semantics the service gives
 * them (see each module). Every failure is an `Error` with a stable `code`: a `BuiltinError`
 * for the node's own checks, the service's `ServiceError` (with `outcomeUnknown`) or the media
 * store's `MediaStoreError` as they came, ABORTED whenever the flow run's signal stopped it.
 */
export class BuiltinRunner implements NodeRunner {
  private readonly deps: BuiltinDeps

  constructor(options: BuiltinRunnerOptions) {
    this.deps = {
      media: options.media,
      service: options.service ?? null,
      fetch: options.fetch ?? ((input, init) => fetch(input, init)),
      polling: checkPolling({ ...DEFAULT_POLLING, ...options.polling }),
      prices: { ...EVALUATION_PRICE_MICRO, ...options.evaluationPriceMicro },
      recordOf: options.recordOf ?? null,
    }
  }

  /** Whether this runner performs the node's built-in. */
  handles(node: FlowNode): boolean {
    return node.type_code === 'builtin' && Object.hasOwn(STEPS, node.builtin_node_code ?? '')
  }

  async run(context: NodeRunContext): Promise<NodeOutcome> {
    const { node, signal } = context
    const code = node.builtin_node_code ?? ''
    const step = Object.hasOwn(STEPS, code) ? STEPS[code] : undefined
    if (node.type_code !== 'builtin' || !step) {
      throw new BuiltinError(
        'BUILTIN_UNKNOWN',
        `Node ${describeNode(node)} is not a built-in this version of Atelier can run (known: ${BUILTIN_CODES.join(', ')}); replace it with one of those.`,
      )
    }
    try {
      throwIfAborted(signal)
      // Work that finished is reported even if a cancel came meanwhile: it may have been paid.
      return await step(builtinRun(context, this.deps))
    } catch (error) {
      throw settleError(error, signal, `Node ${describeNode(node)}`)
    }
  }

  /** Per attempt: a quality gate that sends the flow back pays again for each re-evaluation. */
  estimate(node: FlowNode, _inputs: Record<string, PortValue>): number {
    if (node.type_code === 'builtin' && node.builtin_node_code === 'evaluate') {
      return estimateEvaluation(node, this.deps.prices)
    }
    return 0
  }
}
