import { sharp } from '../../native'
import type { Asset } from '../../../src-shared/api'
import { findBuiltinNode } from '../authoring'
import { nameProblem } from '../media'
import { analyseImage, cuesOf, EVALUATION_PRICE_MICRO, runJudges } from '../evaluations'
import { failedStep, stoppedFailure, checkPorts, type StepContext, type StepResult } from './steps'
import { bytesOf, isStoredFile, nodeSeed, storeImage } from './values'

/**
 * The built-in nodes of flows, computed in-process between model runs. Their ports are those of
 * GET /v1/builtin-nodes; inputs are checked against them as model inputs are.
 */

/** Nominal time of the light nodes; image work and evaluations take longer. */
const LIGHT_MS = 5
const IMAGE_MS = 40
const EVALUATE_MS = 150
const SAVE_MS = 30
/** What POST /v1/evaluations charges for a standard evaluation: the evaluate node costs as much. */
const THUMBNAIL_BOX = 256

interface NodeInfo {
  id: string
  slug: string | null
  label: string
}

/** A failure raised while a node works, with the code and stage its node run shows. */
class StepFailure extends Error {
  constructor(
    readonly code: string,
    readonly stage: string,
    message: string,
  ) {
    super(message)
  }
}

/** Bytes and records are written only for work that is still wanted. */
function failIfStopped(ctx: StepContext): void {
  if (!ctx.signal.aborted) return
  const failure = stoppedFailure()
  throw new StepFailure(failure.code, failure.stage, failure.message)
}

const invalidInput = (message: string) =>
  new StepFailure('INPUT_VALIDATION_FAILED', 'preprocess', message)

const reason = (error: unknown) => (error instanceof Error ? error.message : String(error))

const done = (
  ports: Record<string, unknown>,
  workMs: number,
  extra: Partial<Pick<StepResult, 'cost_micro' | 'logs' | 'output'>> = {},
): StepResult => ({
  ports,
  output: extra.output ?? ports,
  cost_micro: extra.cost_micro ?? 0,
  workMs,
  logs: extra.logs ?? [],
  failure: null,
})

/** The bytes an input names (a stored file, a URL, inline data), or a failure naming the input. */
async function loadInput(ctx: StepContext, value: unknown, name: string): Promise<Buffer> {
  try {
    return await bytesOf(ctx.services, value, ctx.fetchImage)
  } catch (error) {
    throw new StepFailure(
      'INPUT_FETCH_FAILED',
      'preprocess',
      `The ${name} input could not be loaded: ${reason(error)}.`,
    )
  }
}

async function loadImage(ctx: StepContext, value: unknown, name: string): Promise<Buffer> {
  const bytes = await loadInput(ctx, value, name)
  try {
    await sharp(bytes).metadata()
  } catch (error) {
    throw invalidInput(`The ${name} input is not an image that can be read (${reason(error)}).`)
  }
  return bytes
}

function fillTemplate(input: Record<string, unknown>): string {
  const template = String(input.template)
  return template.replace(/\{([A-Za-z0-9_]+)\}/g, (_match, name: string) => {
    const value = name === 'template' ? undefined : input[name]
    if (value === undefined || value === null) {
      throw invalidInput(
        `The template uses {${name}}, but the node has no input named ${JSON.stringify(name)} with a value; add a text input of that name and feed it (an edge, a flow input or a value).`,
      )
    }
    return typeof value === 'string' ? value : JSON.stringify(value)
  })
}

async function resize(ctx: StepContext, input: Record<string, unknown>): Promise<StepResult> {
  const bytes = await loadImage(ctx, input.image, 'image')
  const fit = input.fit === 'cover' || input.fit === 'fill' ? input.fit : 'contain'
  const png = await sharp(bytes)
    .resize({
      width: Number(input.width),
      height: Number(input.height),
      fit,
      background: { r: 0, g: 0, b: 0, alpha: 0 },
    })
    .png()
    .toBuffer()
  failIfStopped(ctx)
  return done({ image: await storeImage(ctx.services, png) }, IMAGE_MS)
}

async function crop(ctx: StepContext, input: Record<string, unknown>): Promise<StepResult> {
  const bytes = await loadImage(ctx, input.image, 'image')
  const { width: imageWidth, height: imageHeight } = (await sharp(bytes).metadata()).autoOrient
  const [left, top, width, height] = [input.x, input.y, input.width, input.height].map(Number) as [
    number,
    number,
    number,
    number,
  ]
  if (left + width > imageWidth || top + height > imageHeight) {
    throw invalidInput(
      `The ${width}×${height} rectangle at ${left}, ${top} reaches outside the ${imageWidth}×${imageHeight} image; make it smaller or move it.`,
    )
  }
  const png = await sharp(bytes).autoOrient().extract({ left, top, width, height }).png().toBuffer()
  failIfStopped(ctx)
  return done({ image: await storeImage(ctx.services, png) }, IMAGE_MS)
}

function pick(ctx: StepContext, node: NodeInfo, input: Record<string, unknown>): StepResult {
  const items = String(input.items)
    .split(/\r?\n/)
    .map((line) => line.trim())
    .filter((line) => line !== '')
  if (items.length === 0) throw invalidInput('The items input has no line to pick from.')
  const index =
    typeof input.index === 'number'
      ? input.index
      : Math.floor((nodeSeed(ctx.seed, node.id) / 0x1_0000_0000) * items.length)
  const item = items[index % items.length] ?? ''
  return done({ item }, LIGHT_MS, {
    logs: [
      {
        level_code: 'info',
        message: `Picked line ${(index % items.length) + 1} of ${items.length}: ${item}`,
      },
    ],
  })
}

function compare(input: Record<string, unknown>): StepResult {
  const value = Number(input.value)
  const threshold = Number(input.threshold)
  const operator = String(input.operator)
  const passed =
    operator === '<'
      ? value < threshold
      : operator === '<='
        ? value <= threshold
        : operator === '='
          ? value === threshold
          : operator === '!='
            ? value !== threshold
            : operator === '>'
              ? value > threshold
              : value >= threshold
  return done({ passed }, LIGHT_MS, {
    logs: [{ level_code: 'info', message: `${value} ${operator} ${threshold} is ${passed}.` }],
  })
}

function branch(input: Record<string, unknown>): StepResult {
  const taken = input.condition === true ? 'if_true' : 'if_false'
  const other = taken === 'if_true' ? 'if_false' : 'if_true'
  return done({ [taken]: input.image }, LIGHT_MS, {
    logs: [
      {
        level_code: 'info',
        message: `The condition is ${String(input.condition)}: the image goes on through ${taken}; the nodes fed by ${other} are skipped.`,
      },
    ],
  })
}

/**
 * The evaluations area's own judges on the image: the score is the weighted share of passing
 * judges, as an evaluation's weighted_pass_rate; issues are what the failed checks found.
 */
async function evaluate(ctx: StepContext, input: Record<string, unknown>): Promise<StepResult> {
  const bytes = await loadImage(ctx, input.image, 'image')
  let facts
  try {
    facts = await analyseImage(bytes)
  } catch (error) {
    throw invalidInput(reason(error))
  }
  const texts = [input.prompt, input.instructions].filter(
    (text): text is string => typeof text === 'string' && text.trim() !== '',
  )
  const outcomes = runJudges(facts, {
    jobClass: 'standard',
    texts,
    cues: cuesOf(...texts),
    requested: { width: null, height: null, aspectRatio: null },
    references: [],
  })
  const total = outcomes.reduce((sum, outcome) => sum + outcome.weight, 0)
  const passedWeight = outcomes.reduce((sum, o) => sum + (o.passed ? o.weight : 0), 0)
  const score = total > 0 ? Number((passedWeight / total).toFixed(4)) : 0
  const minScore = Number(input.min_score)
  const passed = score >= minScore
  const issues = [
    ...new Set(
      outcomes.flatMap((outcome) =>
        outcome.checks.flatMap((check) => (check.issue ? [check.issue.description] : [])),
      ),
    ),
  ]
  return done({ passed, score, issues: issues.join('\n') }, EVALUATE_MS, {
    cost_micro: EVALUATION_PRICE_MICRO.standard,
    logs: [
      {
        level_code: passed ? 'info' : 'warning',
        message: `${outcomes.filter((o) => o.passed).length} of ${outcomes.length} judges passed; score ${score} ${passed ? 'reaches' : 'is below'} ${minScore}.`,
      },
    ],
  })
}

interface Described {
  content_type: string
  media_type: Asset['media_type']
  width: number | null
  height: number | null
  duration_ms: number | null
  format: string | null
}

async function describe(
  bytes: Buffer,
  value: unknown,
  kind: 'image' | 'video',
): Promise<Described> {
  if (isStoredFile(value)) {
    const mediaType = value.content_type.split('/')[0]
    return {
      content_type: value.content_type,
      media_type: mediaType === 'image' || mediaType === 'video' ? mediaType : 'other',
      width: value.width ?? null,
      height: value.height ?? null,
      duration_ms: value.duration_ms ?? null,
      format: value.content_type.split('/')[1] ?? null,
    }
  }
  try {
    const metadata = await sharp(bytes).metadata()
    return {
      content_type: `image/${metadata.format}`,
      media_type: 'image',
      width: metadata.autoOrient.width,
      height: metadata.autoOrient.height,
      duration_ms: null,
      format: metadata.format,
    }
  } catch {
    const declared =
      typeof value === 'string' && value.startsWith('data:')
        ? (value.slice(5).split(/[;,]/)[0] ?? '')
        : ''
    return {
      content_type: declared || 'application/octet-stream',
      media_type: kind === 'video' ? 'video' : 'other',
      width: null,
      height: null,
      duration_ms: null,
      format: null,
    }
  }
}

function checkAssetName(name: string): void {
  // The rule of names the media area keeps for an upload, so a saved asset could be uploaded.
  const problem = nameProblem(name, 'asset')
  if (problem) throw invalidInput(`The name input ${JSON.stringify(name)} ${problem}.`)
}

/**
 * Saves the image or video as an asset of the organization, as an upload would: the bytes in the
 * blob store, a thumbnail for images, the record in `assets` under its folder. An asset with the
 * very same bytes is kept instead of made twice (the media area's duplicate rule).
 */
async function saveToAssets(
  ctx: StepContext,
  node: NodeInfo,
  input: Record<string, unknown>,
): Promise<StepResult> {
  const { store, blobs } = ctx.services
  const kind = input.image !== undefined ? 'image' : 'video'
  const value = input.image ?? input.video
  if (value === undefined) {
    throw invalidInput('Connect an image or a video to this node: it has nothing to save.')
  }
  const folderId =
    typeof input.folder_id === 'string' && input.folder_id !== '' ? input.folder_id : null
  if (folderId !== null && !store.get('asset_folders', folderId, ctx.orgId)) {
    throw invalidInput(
      `The folder_id input names the folder ${folderId}, which does not exist in this organization; pick one from GET /v1/asset-folders, or leave it empty to save at the root.`,
    )
  }
  if (typeof input.name === 'string') checkAssetName(input.name)
  const bytes = await loadInput(ctx, value, kind)
  const described = await describe(bytes, value, kind)
  failIfStopped(ctx)
  const { sha256, size } = blobs.put(bytes)
  const twin = store
    .prepared(
      `SELECT doc FROM records WHERE collection = 'assets' AND org_id = ? AND deleted_at IS NULL
         AND json_extract(doc, '$.sha256') = ? ORDER BY created_at, id LIMIT 1`,
    )
    .get(ctx.orgId, sha256) as { doc: string } | undefined
  if (twin) {
    const existing = JSON.parse(twin.doc) as Asset
    return done({ asset_id: existing.id }, SAVE_MS, {
      logs: [
        {
          level_code: 'info',
          message: `The organization already holds these bytes as asset ${existing.id} (${existing.name}); that asset is kept rather than saved twice.`,
        },
      ],
    })
  }
  let thumbnail: Record<string, unknown> | null = null
  if (described.media_type === 'image') {
    const small = await sharp(bytes)
      .autoOrient()
      .resize(THUMBNAIL_BOX, THUMBNAIL_BOX, { fit: 'inside', withoutEnlargement: true })
      .webp({ quality: 80 })
      .toBuffer()
    const stored = await storeImage(ctx.services, small)
    thumbnail = {
      sha256: stored.sha256,
      content_type: 'image/webp',
      width: stored.width,
      height: stored.height,
    }
  }
  // The thumbnail took a while: the run may have been stopped meanwhile.
  failIfStopped(ctx)
  const extension = described.format ?? 'bin'
  const now = store.now()
  const asset: Asset = {
    id: store.newId(),
    org_id: ctx.orgId,
    folder_id: folderId,
    name:
      typeof input.name === 'string'
        ? input.name
        : `${node.slug ?? 'flow'}-${ctx.runId.slice(0, 8)}.${extension}`,
    media_type: described.media_type,
    content_type: described.content_type,
    size_bytes: size,
    sha256,
    width: described.width,
    height: described.height,
    duration_ms: described.duration_ms,
    url: null,
    url_expires_at: null,
    thumbnail_url: null,
    status_code: 'ready',
    metadata: {
      format: described.format,
      source: 'flow_run',
      run_id: ctx.runId,
      flow_node_id: node.id,
      ...(thumbnail ? { thumbnail } : {}),
    },
    created_at: now,
    updated_at: now,
    deleted_at: null,
  }
  store.insert('assets', ctx.orgId, asset, folderId)
  return done({ asset_id: asset.id }, SAVE_MS, {
    logs: [
      { level_code: 'info', message: `Saved the ${kind} as asset ${asset.id} (${asset.name}).` },
    ],
  })
}

async function compute(
  ctx: StepContext,
  code: string,
  node: NodeInfo,
  input: Record<string, unknown>,
): Promise<StepResult> {
  switch (code) {
    case 'text':
      return done({ text: typeof input.value === 'string' ? input.value : '' }, LIGHT_MS)
    case 'number':
      return done({ number: input.value }, LIGHT_MS)
    case 'image':
      return done({ image: input.value }, LIGHT_MS)
    case 'prompt_template':
      return done({ prompt: fillTemplate(input) }, LIGHT_MS)
    case 'image_resize':
      return resize(ctx, input)
    case 'image_crop':
      return crop(ctx, input)
    case 'pick_from_list':
      return pick(ctx, node, input)
    case 'compare':
      return compare(input)
    case 'branch':
      return branch(input)
    case 'evaluate':
      return evaluate(ctx, input)
    case 'save_to_assets':
      return saveToAssets(ctx, node, input)
    default:
      throw new StepFailure(
        'NODE_UNAVAILABLE',
        'preprocess',
        `The sandbox does not know how to run the built-in node ${code}.`,
      )
  }
}

/** Runs one built-in node on the values that reached its inputs. Failures are answered. */
export async function runBuiltin(
  ctx: StepContext,
  code: string,
  node: NodeInfo,
  given: Record<string, unknown>,
): Promise<StepResult> {
  const spec = findBuiltinNode(code)
  if (!spec) {
    return failedStep({
      code: 'NODE_UNAVAILABLE',
      stage: 'preprocess',
      message: `There is no built-in node ${code}; pick one from GET /v1/builtin-nodes.`,
    })
  }
  const { input, problems } = checkPorts(
    `The ${spec.display_name} node`,
    spec.inputs,
    given,
    code === 'prompt_template',
  )
  if (problems.length > 0) {
    return failedStep({
      code: 'INPUT_VALIDATION_FAILED',
      stage: 'preprocess',
      message: problems.join(' '),
    })
  }
  try {
    return await compute(ctx, code, node, input)
  } catch (error) {
    if (error instanceof StepFailure) {
      return failedStep({ code: error.code, stage: error.stage, message: error.message })
    }
    return failedStep({
      code: 'NODE_ERROR',
      stage: 'inference',
      message: `The ${spec.display_name} node failed: ${reason(error)}`,
    })
  }
}
