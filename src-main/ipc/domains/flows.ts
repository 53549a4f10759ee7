import type { FeatureAccess } from '../feature-access'
import type { IpcHandlers } from '../dispatch'

type FlowChannel = Extract<keyof IpcHandlers, `flows.${string}` | `flowRuns.${string}`>

/** The flow editor's channels (`src-main/flows`), and the previews its media store makes. */
export function flowsHandlers({
  core,
}: FeatureAccess): Pick<IpcHandlers, FlowChannel | 'media.preview'> {
  return {
    'flows.list': () => core().flows.list(),
    'flows.get': (request) => core().flows.get(request),
    'flows.create': (request) => core().flows.create(request),
    'flows.save': (request) => core().flows.save(request),
    'flows.rename': (request) => core().flows.rename(request),
    'flows.delete': (request) => core().flows.delete(request),
    'flows.restore': (request) => core().flows.restore(request),
    'flows.import': (request) => core().flows.import(request),
    'flows.export': (request) => core().flows.export(request),
    'flows.saveVersion': (request) => core().flows.saveVersion(request),
    'flows.restoreVersion': (request) => core().flows.restoreVersion(request),
    'flows.check': (request) => core().flows.check(request),
    'flows.palette': () => core().flows.palette(),
    'flows.runs': (request) => core().flows.runs(request),
    'flowRuns.start': (request) => core().flows.startRun(request),
    'flowRuns.cancel': (request) => core().flows.cancelRun(request),
    'flowRuns.resume': (request) => core().flows.resumeRun(request),
    'media.preview': (request) => core().flows.preview(request),
  }
}
