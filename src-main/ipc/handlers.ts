import { APP_NAME, APP_VERSION } from '../app/version'
import { featureAccess, type HandlerDeps } from './feature-access'
import type { IpcHandlers } from './dispatch'
import { assetsHandlers } from './domains/assets'
import { evaluationsHandlers } from './domains/evaluations'
import { flowsHandlers } from './domains/flows'
import { outputsHandlers } from './domains/outputs'
import { remixHandlers } from './domains/remix'
import { runPageHandlers } from './domains/run-page'
import { runsHandlers } from './domains/runs'
import { settingsHandlers } from './domains/settings'
import { workflowsHandlers } from './domains/workflows'

/**
 * Every channel, adapted to the feature that answers it. A handler only picks the feature and
 * passes the parsed arguments on: "not yet" is answered by the access (`featureAccess`), and a
 * feature's refusal (a `CodedError`) by `dispatchIpc`, each in one place.
 */
export function createHandlers(deps: HandlerDeps): IpcHandlers {
  const access = featureAccess(deps)
  const { core } = access
  return {
    'app.getInfo': (_args, context) => ({
      name: APP_NAME,
      version: APP_VERSION,
      shell: context.shell,
      platform: deps.platform,
      backend: deps.backend(),
    }),
    'app.openExternal': async ({ url }) => {
      await deps.openExternal(url)
      return null
    },
    'account.summary': () => core().accountSummary(),
    'sync.getStatus': () => core().syncStatus(),
    'sync.start': () => core().syncNow(),
    'search.query': (query) => core().search(query),
    'batches.list': (query) => core().batches.list(query),
    'batches.get': (batch) => core().batches.get(batch),
    ...flowsHandlers(access),
    ...runsHandlers(access),
    ...runPageHandlers(access),
    ...evaluationsHandlers(access),
    ...assetsHandlers(access, deps.chooseFolder),
    ...settingsHandlers(access),
    ...workflowsHandlers(access),
    ...remixHandlers(access),
    ...outputsHandlers(access),
  }
}
