import type { Evaluation, Model, Run } from '../../../src-shared/api'
import { conflict } from '../errors'
import { listOf } from '../handlers/common'
import type { Handlers } from '../handlers/types'
import { findModel } from '../models'
import type { SandboxServices } from '../services'
import type { BaseRecord } from '../store'
import type { EvaluationEngine } from './engine'
import { COLLECTION } from './record'
import { submitEvaluation } from './submission'

type Stored = Evaluation & BaseRecord

/**
 * How GET /v1/runs/{id} answers a stored run (the runs area's `presentRun`), handed in by the
 * area wiring: the runs area judges images and seeds evaluations, so it sits above this one, and
 * importing its presenter from here would make the two folders a circle.
 */
export type RunPresenter = (services: SandboxServices, stored: Run) => Run

function modelOf(services: SandboxServices, orgId: string, id: string | null): Model | null {
  if (!id) return null
  return (
    findModel(id) ??
    services.store.get<Model & BaseRecord>('models', id, orgId, {
      includeGlobal: true,
    }) ??
    null
  )
}

export function evaluationHandlers(engine: EvaluationEngine, presentRun: RunPresenter): Handlers {
  return {
    createEvaluation: ({ body, auth, sandbox }) => {
      const evaluation = submitEvaluation(sandbox, auth.orgId, body)
      engine.start(auth.orgId, evaluation.id ?? '')
      return evaluation
    },

    listEvaluations: listOf({ collection: COLLECTION, schema: 'Evaluation' }),

    /** The one read that embeds the run, the model and the parent evaluation (one level deep). */
    getEvaluation: ({ params, auth, sandbox }) => {
      const { store } = sandbox
      const evaluation = store.require<Stored>(
        COLLECTION,
        params.evaluation_id,
        auth.orgId,
        'The evaluation',
      )
      const run = evaluation.run_id
        ? store.get<Run & BaseRecord>('runs', evaluation.run_id, auth.orgId)
        : undefined
      const parent = evaluation.parent_evaluation_id
        ? store.get<Stored>(COLLECTION, evaluation.parent_evaluation_id, auth.orgId)
        : undefined
      return {
        ...evaluation,
        // As GET /v1/runs/{id} answers it: no internals, fresh output URLs.
        run: run ? presentRun(sandbox, run) : null,
        model: modelOf(sandbox, auth.orgId, evaluation.model_id),
        parent_evaluation: parent ?? null,
      }
    },

    /**
     * A rating is about a verdict, so only a completed evaluation can be rated: one still pending
     * or running, or one that failed without a verdict, answers 409 CONFLICT. Each call replaces
     * the rating; is_positive null clears it and drops any reason sent with it.
     */
    setEvaluationFeedback: ({ params, body, auth, sandbox }) => {
      const { store } = sandbox
      return store.transaction(() => {
        const current = store.require<Stored>(
          COLLECTION,
          params.evaluation_id,
          auth.orgId,
          'The evaluation',
        )
        if (current.status_code !== 'completed') {
          throw conflict(
            current.status_code === 'failed'
              ? 'This evaluation failed without a verdict, so there is nothing to rate; re-evaluate the image and rate the new attempt.'
              : `This evaluation is still ${String(current.status_code)}; rate it once status_code is completed.`,
          )
        }
        const rating = body.is_positive
        return store.update<Stored>(COLLECTION, params.evaluation_id, auth.orgId, (evaluation) => ({
          ...evaluation,
          feedback_is_positive: rating,
          feedback_reason: rating === null ? null : (body.reason ?? null),
        }))
      })
    },
  }
}
