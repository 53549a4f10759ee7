import type { FlowRunEvent } from '../../../src-shared/domain/flow-run'
import {
  applyNodeEvent,
  applyRunEvent,
  docToFlowFile,
  placeRefusal,
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
  startRun: (options?: RunOptions) => Promise<boolean>
  cancelRun: () => Promise<void>
  /** Forgets the run's states (the run itself goes on in the main process). */
  clearRun: () => void
}

/** Events of runs not yet known (they may overtake `flowRuns.start`'s answer), at most this many. */
const EARLY_EVENTS_LIMIT = 2000

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
    runPhase: 'idle',
    run: null,
    runProblem: null,
    runIssues: [],
    nodeRuns: {},

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
      set({ runPhase: 'starting', run: null, nodeRuns: {}, runProblem: null, runIssues: [] })
      const result = await api.flowRuns.start({
        flow: docToFlowFile(doc),
        inputs: options.inputs ?? {},
        force: options.force ?? [],
        ...(options.only ? { only: options.only } : {}),
      })
      if (!result.ok) {
        set({
          runPhase: 'idle',
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

    clearRun: () => {
      currentRunId = null
      early.clear()
      earlyCount = 0
      set({ runPhase: 'idle', run: null, runProblem: null, runIssues: [], nodeRuns: {} })
    },
  }
}
