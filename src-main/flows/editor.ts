import { join } from 'node:path'
import type { FlowRunEventMessage } from '../../src-shared/domain/flow-editor'
import type { Databases, LocalFlowScope } from '../db'
import type { FlowRunners } from '../executor'
import type { Logger } from '../log'
import { MediaStore, previewOf } from '../media-store'
import type { ServiceClient } from '../service'
import { ledgerPins } from '../sync'
import { editorCatalog } from './catalog'
import { checkFlow } from './check'
import { readFlow } from './documents'
import { FlowLibrary } from './library'
import { Palette } from './palette'
import { flowRunners } from './runners'
import { EditorRuns } from './runs'
import type { FlowEditor } from './types'

export interface FlowEditorOptions {
  databases: Databases
  client: ServiceClient
  /** The profile and organization local flows, flow runs and the cache belong to. */
  profile: string
  orgId: string
  /** Atelier's home: the media store is `<home>/<mediaDir>`, shared with sync and `atelier run`. */
  home: string
  mediaDir: string
  mediaMaxBytes: number
  /** Where `flowRuns.event` messages go (the core's event sink). */
  emit: (message: FlowRunEventMessage) => void
  logger: Logger
  clock?: () => number
  /** True while the sync knows the service cannot be reached: opening a flow asks nothing then. */
  isOffline?: () => boolean
}

/** Local flows in the trash longer than this are deleted for good when Atelier starts. */
export const TRASH_KEPT_MS = 30 * 24 * 60 * 60 * 1000

/**
 * Opens the editor's parts over the core's databases and client: the library (flows, saving,
 * versions), the palette, the runs and the media store, each answering its channels itself.
 */
export function openFlowEditor(options: FlowEditorOptions): FlowEditor {
  const { databases, client, orgId, logger } = options
  const { mirror, ledger } = databases
  const clock = options.clock ?? Date.now
  const scope: LocalFlowScope = { profile: options.profile, orgId }
  const closing = new AbortController()
  const catalog = editorCatalog({ mirror, ledger, client, scope })

  const purged = ledger.localFlows.purgeTrash(clock() - TRASH_KEPT_MS)
  if (purged > 0) logger.info('emptied the trash of old local flows', { purged })

  // Opened on first use: a window that only lists flows never pays for the media store's check.
  let media: MediaStore | null = null
  let runners: FlowRunners | null = null
  const runnersNow = (): FlowRunners => {
    if (runners) return runners
    media = new MediaStore({
      dir: join(options.home, options.mediaDir),
      maxBytes: options.mediaMaxBytes,
      isPinned: ledgerPins(ledger),
    })
    runners = flowRunners({ client, ledger, mirror, media, profile: scope.profile, orgId })
    return runners
  }
  const builtinRunner = () => {
    const { builtin } = runnersNow()
    if (!builtin) throw new Error('The built-in runner is missing.')
    return builtin
  }

  const library = new FlowLibrary({
    ledger,
    mirror,
    client,
    scope,
    clock,
    logger,
    signal: closing.signal,
    ...(options.isOffline ? { isOffline: options.isOffline } : {}),
  })
  const palette = new Palette({
    mirror,
    client,
    orgId,
    logger,
    builtinRunner,
    localFlows: () => library.localFlows(),
    signal: closing.signal,
  })
  const runs = new EditorRuns({
    ledger,
    client,
    catalog,
    scope,
    runners: runnersNow,
    emit: options.emit,
    logger,
    offline: options.isOffline,
  })

  let closed: Promise<void> | null = null
  return {
    list: () => library.list(),
    get: (request) => library.get(request),
    create: (request) => library.create(request),
    save: (request) => library.save(request),
    rename: (request) => library.rename(request),
    delete: (request) => library.delete(request),
    restore: (request) => library.restore(request),
    import: (request) => library.import(request),
    export: (request) => library.export(request),
    saveVersion: (request) => library.saveVersion(request),
    restoreVersion: (request) => library.restoreVersion(request),
    check: ({ flow, inputs }) =>
      checkFlow(
        {
          catalog,
          runners: runnersNow,
          client,
          orgId,
          logger,
          signal: closing.signal,
          cache: { flowRuns: ledger.flowRuns, scope },
        },
        readFlow(flow, 'The flow'),
        inputs,
      ),
    palette: () => palette.items(),
    runs: runs.list,
    startRun: runs.start,
    preview: (request) => {
      runnersNow()
      if (!media) throw new Error('The media store did not open.')
      return previewOf(media, { ...request, signal: closing.signal })
    },
    cancelRun: runs.cancel,
    resumeRun: runs.resume,
    close: () => {
      closed ??= (async () => {
        closing.abort()
        await runs.close()
        await media?.close()
      })()
      return closed
    },
  }
}
