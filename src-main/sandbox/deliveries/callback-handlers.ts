import { conflict, invalid } from '../errors'
import type { Handlers } from '../handlers/types'
import { presentRun } from '../runs'
import { freeze, runPayload } from './payloads'
import type { DeliveryQueries } from './queries'
import {
  COLLECTIONS,
  isTerminalRunStatus,
  type Batch,
  type BatchCallbackDelivery,
  type RunCallbackDelivery,
  type RunCallbackPayload,
  namedSecretId,
  type Run,
  type SecretNaming,
} from './records'
import type { Secrets } from './secrets'
import type { DeliveryTriggers, Frozen } from './triggers'

export interface CallbackParts {
  queries: DeliveryQueries
  secrets: Secrets
  triggers: DeliveryTriggers
}

/** Callback secrets, the callback history of runs and batches, and run redelivery. */
export function callbackHandlers({ queries, secrets, triggers }: CallbackParts): Handlers {
  return {
    createCallbackSecret: ({ body, auth }) => {
      const label = body.label.trim()
      if (label === '') {
        throw invalid('The label is blank; give the secret a name you will recognise.', [
          { field: 'label', code: 'minLength', message: 'label must not be blank.' },
        ])
      }
      const { secret, plain } = secrets.createCallbackSecret(auth.orgId, label)
      return {
        id: secret.id,
        label: secret.label,
        plain_secret: plain,
        fingerprint: secret.fingerprint,
        created_at: secret.created_at,
      }
    },

    listRunCallbackDeliveries: ({ params, auth, sandbox }) => {
      sandbox.store.require('runs', params.run_id, auth.orgId, 'The run', {
        notFoundCode: 'RUN_NOT_FOUND',
      })
      return queries.children<RunCallbackDelivery>(
        COLLECTIONS.runCallbacks,
        auth.orgId,
        params.run_id,
      )
    },

    listBatchCallbackDeliveries: ({ params, auth, sandbox }) => {
      sandbox.store.require<Batch>('batches', params.batch_id, auth.orgId, 'The batch')
      return queries.children<BatchCallbackDelivery>(
        COLLECTIONS.batchCallbacks,
        auth.orgId,
        params.batch_id,
      )
    },

    /**
     * Replays the very bytes of the run's first callback (the payload was frozen then), signed
     * by the secret the rules pick now, so a rotated secret applies to the replay.
     */
    redeliverRunCallback: ({ params, auth, sandbox }) => {
      const run = sandbox.store.require<Run & SecretNaming>(
        'runs',
        params.run_id,
        auth.orgId,
        'The run',
        {
          notFoundCode: 'RUN_NOT_FOUND',
        },
      )
      if (!isTerminalRunStatus(run.status_code)) {
        throw conflict(
          `The run is still ${run.status_code}; its callback can be replayed once it has finished.`,
        )
      }
      if (!run.callback_url) {
        throw conflict(
          'The run was dispatched without a callback_url, so it has no callback to replay.',
        )
      }
      const [original] = queries.children<RunCallbackDelivery>(
        COLLECTIONS.runCallbacks,
        auth.orgId,
        run.id,
      )
      const fresh = original ? null : runPayload(presentRun(sandbox, run as Run), sandbox.clock())
      const frozen: Frozen<RunCallbackPayload> | null = original
        ? { bytes: original.payload_bytes, payload: original.payload }
        : fresh && freeze(fresh)
      if (!frozen) throw new Error('a terminal run always has a callback payload')
      return triggers.runCallback(
        auth.orgId,
        run.id,
        original?.callback_url ?? run.callback_url,
        namedSecretId(run),
        frozen,
        false,
      )
    },
  }
}
