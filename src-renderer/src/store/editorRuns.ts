import type { FlowRunSummary } from '../../../src-shared/domain/flow-editor'
import type { FlowRunEvent } from '../../../src-shared/domain/flow-run'
import {
  applyNodeEvent,
  applyRunEvent,
  docToFlowFile,
  nodeFingerprints,
  placeRefusal,
  type EditorDoc,
  type NodeRunView,
  type RefusalIssue,
  type RunView,
} from '../flows/document'
import { errorText } from '../shell/errorWords'
import { NOT_CONNECTED } from './flows'
import type { SliceWithApi } from './api'

/** `starting`: asked, no id yet; `canceling`: asked to stop, its last events still to come. */
export type RunPhase = 'idle' | 'starting' | 'running' | 'canceling' | 'ended'

export interface RunOptions {
  /** By flow input name. */
  inputs?: Record<string, unknown>
  /** "Run to here": only these nodes and what they need. */
  only?: string[]
  /** Run these again even when cached, with what depends on them. */
  force?: string[]
}

export interface EditorRunSlice {
  runPhase: RunPhase
  /** The run started from the editor, as its events tell it. */
  run: RunView | null
  /** Why the run could not start or be canceled, in plain words. */
  runProblem: string | null
  /** The problems a refused run came back with, placed on their nodes where they name one. */
  runIssues: RefusalIssue[]
  /** Each node's live state in the run, by node id. */
  nodeRuns: Record<string, NodeRunView>
  /**
   * What each node's result was made from (`nodeFingerprints` of the document the run started
   * with), by node id: a node whose fingerprint differs now shows its result as out of date.
   */
  runFingerprints: ReadonlyMap<string, string> | null
  startRun: (options?: RunOptions) => Promise<boolean>
  cancelRun: () => Promise<void>
  /**
   * Runs the interrupted run again under its id (`canResume`): what succeeded is kept, and what
   * was being sent is looked up first, so nothing is paid twice.
   */
  resumeRun: (flowRunId?: string) => Promise<boolean>
  /** The open flow's runs on this computer, newest first (`loadFlowRunHistory`); null: not read. */
  flowRunHistory: FlowRunSummary[] | null
  /** Why the history could not be read, in plain words. */
  flowRunHistoryProblem: string | null
  loadFlowRunHistory: () => Promise<void>
  /** What the last run refused as offline asked for: it can be queued until the service is back. */
  offlineRefusal: RunOptions | null
  /** The one run waiting for the service to be back (`QueuedRun` starts it); null when none. */
  queuedRun: RunOptions | null
  /** Queues the run refused as offline. */
  queueRun: () => void
  cancelQueuedRun: () => void
  /** Forgets the run's states (the run itself goes on in the main process). */
  clearRun: () => void
}

/** Events of runs not yet known (they may overtake `flowRuns.start`'s answer), at most this many. */
const EARLY_EVENTS_LIMIT = 2000

/** The editor's run states before any run, and after `clearRun`. */
const NO_RUN = {
  runPhase: 'idle',
  run: null,
  runProblem: null,
  runIssues: [],
  nodeRuns: {},
  runFingerprints: null,
  offlineRefusal: null,
  queuedRun: null,
  flowRunHistory: null,
  flowRunHistoryProblem: null,
} satisfies Partial<EditorRunSlice>

export const createEditorRunSlice: SliceWithApi<EditorRunSlice> = (atelier) => (set, get) => {
  /** The transport listened to, and how to stop: a new transport (a test's) is heard too. */
  let listeningTo: object | null = null
  let stopListening: (() => void) | null = null
  /** The run whose events the editor shows. */
  let currentRunId: string | null = null
  const early = new Map<string, FlowRunEvent[]>()
  let earlyCount = 0

  const apply = (event: FlowRunEvent) => {
    const state = get()
    const run = applyRunEvent(state.run, event)
    const nodeRuns = applyNodeEvent(state.nodeRuns, event, Date.now())
    set({
      run,
      nodeRuns,
      ...(event.type === 'flow-finished' ? { runPhase: 'ended' as const } : {}),
    })
  }

  const listen = () => {
    const api = atelier()
    if (!api || listeningTo === api) return
    stopListening?.()
    listeningTo = api
    stopListening = api.on('flowRuns.event', ({ flowRunId, event }) => {
      if (flowRunId === currentRunId) {
        apply(event)
        return
      }
      if (get().runPhase !== 'starting' || earlyCount >= EARLY_EVENTS_LIMIT) return
      early.set(flowRunId, [...(early.get(flowRunId) ?? []), event])
      earlyCount++
    })
  }

  return {
    ...NO_RUN,

    startRun: async (options = {}) => {
      const api = atelier()
      const { doc, runPhase } = get()
      if (!api) {
        set({ runProblem: NOT_CONNECTED })
        return false
      }
      if (!doc || runPhase === 'starting' || runPhase === 'running' || runPhase === 'canceling') {
        return false
      }
      listen()
      currentRunId = null
      early.clear()
      earlyCount = 0
      set({
        runPhase: 'starting',
        offlineRefusal: null,
        run: null,
        nodeRuns: {},
        runFingerprints: nodeFingerprints(doc),
        runProblem: null,
        runIssues: [],
      })
      const result = await api.flowRuns.start({
        flow: docToFlowFile(doc),
        inputs: options.inputs ?? {},
        force: options.force ?? [],
        ...(options.only ? { only: options.only } : {}),
      })
      if (!result.ok) {
        set({
          runPhase: 'idle',
          offlineRefusal: result.error.code === 'OFFLINE' ? options : null,
          runProblem: errorText(result.error),
          runIssues: placeRefusal(
            result.error.issues ?? [],
            doc,
            get().check?.problems ?? [],
            options.only === undefined,
          ),
        })
        return false
      }
      const { flowRunId } = result.value
      currentRunId = flowRunId
      set({
        runPhase: 'running',
        run: {
          flowRunId,
          state: 'running',
          estimateMicro: null,
          totals: null,
          outputs: null,
        },
      })
      const overtaken = early.get(flowRunId) ?? []
      early.clear()
      earlyCount = 0
      for (const event of overtaken) apply(event)
      return true
    },

    cancelRun: async () => {
      const api = atelier()
      const { run, runPhase } = get()
      if (!api || !run || runPhase !== 'running') return
      set({ runPhase: 'canceling' })
      const result = await api.flowRuns.cancel({ flowRunId: run.flowRunId })
      if (!result.ok && get().runPhase === 'canceling') {
        // FLOW_RUN_NOT_FOUND: it ended meanwhile; its last events say how.
        set({
          runPhase: result.error.code === 'FLOW_RUN_NOT_FOUND' ? 'ended' : 'running',
          runProblem: result.error.code === 'FLOW_RUN_NOT_FOUND' ? null : errorText(result.error),
        })
      }
    },

    queueRun: () => {
      const options = get().offlineRefusal
      if (options === null) return
      set({ queuedRun: options, offlineRefusal: null, runProblem: null, runIssues: [] })
    },

    cancelQueuedRun: () => {
      set({ queuedRun: null })
    },

    resumeRun: async (fromHistory) => {
      const api = atelier()
      const { doc, run, runPhase } = get()
      // One from the history: the main process knows whether it can be resumed, and says why not.
      const flowRunId = fromHistory ?? (canResume(get()) ? run?.flowRunId : undefined)
      const busy = runPhase === 'starting' || runPhase === 'running' || runPhase === 'canceling'
      if (!api || !doc || flowRunId === undefined || busy) return false
      listen()
      // Its events come under the same id: heard from the first one on.
      currentRunId = flowRunId
      early.clear()
      earlyCount = 0
      set({
        runPhase: 'starting',
        run: { flowRunId, state: 'running', estimateMicro: null, totals: null, outputs: null },
        nodeRuns: {},
        runFingerprints: nodeFingerprints(doc),
        runProblem: null,
        runIssues: [],
      })
      const result = await api.flowRuns.resume({ flow: docToFlowFile(doc), flowRunId })
      if (!result.ok) {
        currentRunId = null
        set({ runPhase: 'idle', run: null, runProblem: errorText(result.error) })
        return false
      }
      if (get().runPhase === 'starting') set({ runPhase: 'running' })
      return true
    },

    loadFlowRunHistory: async () => {
      const api = atelier()
      const flowId = get().editor?.id
      if (!api || flowId === undefined) return
      const result = await api.flows.runs({ id: flowId })
      // The flow may have been closed or another opened meanwhile.
      if (get().editor?.id !== flowId) return
      if (result.ok) set({ flowRunHistory: result.value, flowRunHistoryProblem: null })
      else set({ flowRunHistoryProblem: errorText(result.error) })
    },

    clearRun: () => {
      currentRunId = null
      early.clear()
      earlyCount = 0
      set(NO_RUN)
    },
  }
}

/**
 * Whether the node's result was made from other settings than the document's now (an input
 * edited, a node upstream changed, an undo or redo past the run's settings): its result is
 * shown dimmed as out of date, and never as "Done" or "Cached". Only a result counts: a node
 * that failed or was skipped made none.
 */
export function isOutOfDate(
  state: Pick<EditorRunSlice, 'nodeRuns' | 'runFingerprints'> & { doc: EditorDoc | null },
  nodeId: string,
): boolean {
  const view = state.nodeRuns[nodeId]
  const made = state.runFingerprints?.get(nodeId)
  if (!view || made === undefined || !state.doc) return false
  if (view.state !== 'succeeded' && view.state !== 'cached') return false
  return nodeFingerprints(state.doc).get(nodeId) !== made
}

/** Node failures that mean the service could not be reached, not that the work failed. */
const INTERRUPTED_CODES: ReadonlySet<string> = new Set(['SERVICE_UNREACHABLE', 'OUTCOME_UNKNOWN'])

/**
 * Whether the run that ended was interrupted by a lost connection: one of its nodes failed only
 * because the service could not be reached. Resume picks it up where it stopped.
 */
export function canResume(state: Pick<EditorRunSlice, 'run' | 'nodeRuns' | 'runPhase'>): boolean {
  if (state.runPhase !== 'ended' || state.run?.state !== 'failed') return false
  return Object.values(state.nodeRuns).some(
    (view) =>
      view.state === 'failed' && view.error !== null && INTERRUPTED_CODES.has(view.error.code),
  )
}
