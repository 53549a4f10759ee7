import type { Asset, Evaluation, EvaluationCreate, Run } from '../../../src-shared/api'
import { formatCredits } from '../accounts'
import { invalid, notFound, SandboxError } from '../errors'
import { findModel, microToDecimal } from '../models'
import type { SandboxServices } from '../services'
import type { BaseRecord } from '../store'
import { COLLECTION, isTerminal, linksOf, PRICE_MICRO, type JobClass } from './record'

/** More references would make one evaluation fetch without bound. */
const MAX_REFERENCE_IMAGES = 8
const FETCHABLE = new Set(['http:', 'https:', 'data:'])

function checkFetchable(url: string, field: string): void {
  let protocol: string
  try {
    protocol = new URL(url).protocol
  } catch {
    protocol = ''
  }
  if (!FETCHABLE.has(protocol)) {
    throw invalid(`${field} must be an http, https or data: URL.`, [
      { field, code: 'scheme', message: `${field} must be an http, https or data: URL.` },
    ])
  }
}

function requireImageAsset(
  services: SandboxServices,
  orgId: string,
  assetId: string,
  field: string,
): Asset {
  const asset = services.store.get<Asset>('assets', assetId, orgId)
  if (!asset) throw notFound(`The asset ${assetId} (${field})`)
  if (asset.status_code !== 'ready') {
    const message = `The asset ${assetId} is ${asset.status_code}; wait until it is ready, then submit again.`
    throw invalid(message, [{ field, code: 'not_ready', message }])
  }
  if (asset.media_type === 'video' || asset.media_type === 'audio') {
    const message = `The asset ${assetId} is ${asset.media_type === 'video' ? 'a video' : 'audio'}; evaluations judge images.`
    throw invalid(message, [{ field, code: 'media_type', message }])
  }
  return asset
}

/** The parent of a re-evaluation: of this organization, finished, and not superseded yet. */
function requireParent(services: SandboxServices, orgId: string, parentId: string): Evaluation {
  const parent = services.store.require<Evaluation & BaseRecord>(
    COLLECTION,
    parentId,
    orgId,
    `The parent evaluation ${parentId}`,
  )
  const field = 'parent_evaluation_id'
  if (parent.superseded_at !== null) {
    const newer = parent.links?.superseded_by
    const message = `The evaluation ${parentId} was already re-evaluated${typeof newer === 'string' ? ` (${newer})` : ''}; re-evaluate the newest attempt instead.`
    throw invalid(message, [{ field, code: 'superseded', message }])
  }
  if (!isTerminal(parent)) {
    const message = `The evaluation ${parentId} is still ${String(parent.status_code)}; re-evaluate it once it has completed or failed.`
    throw invalid(message, [{ field, code: 'not_finished', message }])
  }
  return parent
}

/** Width, height and aspect ratio of the run's input: what the image was asked to be. */
function requestedShapeOf(input: Record<string, unknown>): Record<string, unknown> | null {
  const shape: Record<string, unknown> = {}
  for (const key of ['width', 'height', 'aspect_ratio']) {
    if (input[key] !== undefined && input[key] !== null) shape[key] = input[key]
  }
  return Object.keys(shape).length > 0 ? shape : null
}

function checkRelated(services: SandboxServices, orgId: string, body: EvaluationCreate): void {
  const { store } = services
  if (body.model_id !== undefined) {
    const known =
      findModel(body.model_id) ?? store.get('models', body.model_id, orgId, { includeGlobal: true })
    if (!known) throw notFound(`The model ${body.model_id}`)
  }
  if (
    body.flow_id !== undefined &&
    !store.get('flows', body.flow_id, orgId, { includeGlobal: true })
  )
    throw notFound(`The flow ${body.flow_id}`)
  if (
    body.wfengine_workflow_id !== undefined &&
    !store.get('wfengine_workflows', body.wfengine_workflow_id, orgId, { includeGlobal: true })
  )
    throw notFound(`The workflow ${body.wfengine_workflow_id}`)
}

/**
 * Checks a submission, charges for it and stores it as pending; the caller starts its life cycle.
 * A re-evaluation (parent_evaluation_id) is attempt parent + 1, supersedes its parent and, for
 * the fields it leaves out, keeps the parent's context (prompt, instructions, run, model…).
 */
export function submitEvaluation(
  services: SandboxServices,
  orgId: string,
  body: EvaluationCreate,
): Evaluation {
  const { store, accounts } = services
  if (body.generated_image_url !== undefined)
    checkFetchable(body.generated_image_url, 'generated_image_url')
  if (body.asset_id !== undefined) requireImageAsset(services, orgId, body.asset_id, 'asset_id')
  const references = body.reference_images ?? null
  if (references && references.length > MAX_REFERENCE_IMAGES) {
    const message = `At most ${String(MAX_REFERENCE_IMAGES)} reference images can be given.`
    throw invalid(message, [{ field: 'reference_images', code: 'max_items', message }])
  }
  references?.forEach((reference, index) => {
    const field = `reference_images.${String(index)}`
    if (reference.url !== undefined) checkFetchable(reference.url, `${field}.url`)
    if (reference.asset_id !== undefined)
      requireImageAsset(services, orgId, reference.asset_id, `${field}.asset_id`)
  })
  checkRelated(services, orgId, body)

  return store.transaction(() => {
    const parent = body.parent_evaluation_id
      ? requireParent(services, orgId, body.parent_evaluation_id)
      : null
    const runId = body.run_id ?? parent?.run_id ?? null
    const run = runId ? store.get<Run>('runs', runId, orgId) : undefined
    if (runId && !run) throw notFound(`The run ${runId}`, 'RUN_NOT_FOUND')

    const jobClass: JobClass = body.job_class_code ?? 'standard'
    const price = PRICE_MICRO[jobClass]
    if (!accounts.charge(orgId, price)) {
      const balance = accounts.balance(orgId).balance_micro
      throw new SandboxError(
        402,
        'INSUFFICIENT_CREDIT',
        `The balance (${formatCredits(balance)} credits) is below the ${microToDecimal(price)} credits a ${jobClass} evaluation costs; top up${jobClass === 'standard' ? ` or use job_class_code quick (${microToDecimal(PRICE_MICRO.quick)} credits)` : ''}.`,
      )
    }

    const id = store.newId()
    const now = store.now()
    const runPrompt = run?.input.prompt
    const modelId = body.model_id ?? parent?.model_id ?? run?.model_id ?? null
    const flowId = body.flow_id ?? parent?.flow_id ?? run?.flow_id ?? null
    const workflowId =
      body.wfengine_workflow_id ?? parent?.wfengine_workflow_id ?? run?.wfengine_workflow_id ?? null
    const record: Evaluation = {
      id,
      org_id: orgId,
      run_id: runId,
      model_id: modelId,
      flow_id: flowId,
      wfengine_workflow_id: workflowId,
      parent_evaluation_id: parent?.id ?? null,
      target_type_code:
        body.target_type_code ??
        parent?.target_type_code ??
        run?.target_type_code ??
        (flowId ? 'flow' : workflowId ? 'wfengine_workflow' : modelId ? 'model' : null),
      task_type: body.task_type ?? parent?.task_type ?? null,
      task_description: body.task_description ?? parent?.task_description ?? null,
      generation_prompt:
        body.generation_prompt ??
        parent?.generation_prompt ??
        (typeof runPrompt === 'string' ? runPrompt : null),
      generated_image_url: body.generated_image_url ?? null,
      evaluation_instructions:
        body.evaluation_instructions ?? parent?.evaluation_instructions ?? null,
      override_reason: null,
      primary_action_code: null,
      feedback_reason: null,
      client_ref: body.client_ref ?? null,
      // Stored, not called: the spec does not show the events of evaluations, so there is no
      // payload a receiver could rely on. Clients poll GET /v1/evaluations/{id} (or the list,
      // with q=updated_at>=…) instead.
      callback_url: body.callback_url ?? null,
      status_code: 'pending',
      source_code: 'api',
      failure_code: null,
      job_class_code: jobClass,
      input_attributes:
        body.input_attributes ??
        parent?.input_attributes ??
        (run ? requestedShapeOf(run.input) : null),
      check_summary: null,
      links: linksOf(id, { assetId: body.asset_id ?? null, runId, parentId: parent?.id ?? null }),
      reference_images: references
        ? references.map((reference) => ({ ...reference }))
        : (parent?.reference_images ?? null),
      overall_passed: null,
      feedback_is_positive: null,
      weighted_pass_rate: null,
      top_issues: null,
      top_strengths: null,
      analysis_modules_executed: null,
      attempt_number: parent ? (parent.attempt_number ?? 1) + 1 : 1,
      eval_duration_ms: null,
      superseded_at: null,
      created_at: now,
      updated_at: now,
      submitted_at: null,
      completed_at: null,
      cost: microToDecimal(price),
      judges: null,
      gate_failures: null,
      action: null,
    }
    if (parent) {
      // The update bumps the parent's updated_at, so an incremental sync picks it up too.
      store.update<Evaluation & BaseRecord>(COLLECTION, parent.id ?? '', orgId, (current) => ({
        ...current,
        superseded_at: now,
        links: { ...current.links, superseded_by: `/v1/evaluations/${id}` },
      }))
    }
    store.insert(COLLECTION, orgId, record as Evaluation & BaseRecord, parent?.id ?? null)
    return record
  })
}
