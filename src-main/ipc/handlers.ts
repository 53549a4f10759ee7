import { APP_NAME, APP_VERSION } from '../app/version'
import { isFlowEditorError } from '../flows/errors'
import { isMediaStoreError } from '../media-store'
import { isSearchError } from '../search'
import { coreOf, type FlowEditorControl, type HandlerDeps, type Awaitable } from './core-access'
import { IpcHandlerError, type IpcHandlers } from './dispatch'
import { assetsHandlers } from './domains/assets'
import { evaluationsHandlers } from './domains/evaluations'
import { runPageHandlers } from './domains/run-page'
import { runsHandlers } from './domains/runs'
import { settingsHandlers } from './domains/settings'

function flowsOf(deps: HandlerDeps): FlowEditorControl {
  const flows = coreOf(deps).flows
  if (!flows) {
    throw new IpcHandlerError('UNAVAILABLE', 'The flow editor is not available in this window.')
  }
  return flows
}

/** Calls the flow editor, turning its own errors into the channel's error. */
async function editor<T>(deps: HandlerDeps, call: (flows: FlowEditorControl) => Awaitable<T>) {
  try {
    return await call(flowsOf(deps))
  } catch (error) {
    if (isFlowEditorError(error)) {
      throw new IpcHandlerError(error.code, error.message, error.issues)
    }
    if (isMediaStoreError(error)) throw new IpcHandlerError(error.code, error.message)
    throw error
  }
}

export function createHandlers(deps: HandlerDeps): IpcHandlers {
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
    'account.summary': () => coreOf(deps).accountSummary(),
    'sync.getStatus': () => coreOf(deps).syncStatus(),
    'sync.start': () => coreOf(deps).syncNow(),
    'search.query': (query) => {
      try {
        return coreOf(deps).search(query)
      } catch (error) {
        if (isSearchError(error)) throw new IpcHandlerError(error.code, error.message)
        throw error
      }
    },
    'flows.list': () => editor(deps, (f) => f.list()),
    'flows.get': (args) => editor(deps, (f) => f.get(args)),
    'flows.create': (args) => editor(deps, (f) => f.create(args)),
    'flows.save': (args) => editor(deps, (f) => f.save(args)),
    'flows.rename': (args) => editor(deps, (f) => f.rename(args)),
    'flows.delete': (args) => editor(deps, (f) => f.delete(args)),
    'flows.restore': (args) => editor(deps, (f) => f.restore(args)),
    'flows.import': (args) => editor(deps, (f) => f.import(args)),
    'flows.export': (args) => editor(deps, (f) => f.export(args)),
    'flows.saveVersion': (args) => editor(deps, (f) => f.saveVersion(args)),
    'flows.restoreVersion': (args) => editor(deps, (f) => f.restoreVersion(args)),
    'flows.check': (args) => editor(deps, (f) => f.check(args)),
    'flows.palette': () => editor(deps, (f) => f.palette()),
    'flowRuns.start': (args) => editor(deps, (f) => f.startRun(args)),
    'flowRuns.cancel': (args) => editor(deps, (f) => f.cancelRun(args)),
    'media.preview': (args) => editor(deps, (f) => f.preview(args)),
    ...runsHandlers(deps),
    ...runPageHandlers(deps),
    ...evaluationsHandlers(deps),
    ...assetsHandlers(deps),
    ...settingsHandlers(deps),
  }
}
