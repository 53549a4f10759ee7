import { randomUUID } from 'node:crypto'
import {
  INTERRUPTED_CODES,
  type FlowRef,
  type FlowRunEventMessage,
  type FlowRunRef,
  type FlowRunSummary,
  type FlowRunRequest,
  type FlowRunResumeRequest,
  type StartedRun,
} from '../../src-shared/domain/flow-editor'
import type { FlowRunEvent, NodeRunRecord } from '../../src-shared/domain/flow-run'
import type { Ledger, LocalFlowScope } from '../db'
import {
  isFlowRunError,
  runFlow,
  type FlowDocument,
  type FlowRunners,
  type OnlineCatalog,
} from '../executor'
import type { Logger } from '../log'
import { isServiceError, type ServiceClient } from '../service'
import { issuesOf, readFlow } from './documents'
import { FlowEditorError } from './errors'

export interface EditorRunsOptions {
  ledger: Ledger
  client: ServiceClient
  catalog: OnlineCatalog
  scope: LocalFlowScope
  runners: () => FlowRunners
  /** Where every event of every run goes. */
  emit: (message: FlowRunEventMessage) => void
  logger: Logger
  /**
   * True while the app knows the service cannot be reached (what the sidebar shows): a run is
   * refused at once rather than after the client's retries.
   */
  offline?: (() => boolean) | undefined
}

/** The refusal while offline, before anything is sent. */
export const OFFLINE_MESSAGE =
  'You are offline: the service cannot be reached, so nothing was started or charged. Run again when the service is back.'

/** How many of a flow's runs its run history lists. */
const RUNS_LISTED = 50

interface Running {
  controller: AbortController
  /** Settles once the run has ended and its record is written; never rejects. */
  ended: Promise<void>
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value)

/**
 * Flow runs started from the editor: `runFlow` exactly as `atelier run` calls it (the same
 * runners, ledger, cache and media store), in the background. `start` answers once the run has
 * passed everything that can refuse it (problems, the balance) — nothing is dispatched before —
 * so a refusal is the call's error and a start its id. Events wait for that answer and then
 * follow in order, so the window knows the id before the first event that carries it.
 */
export class EditorRuns {
  private readonly running = new Map<string, Running>()
  private closing = false

  constructor(private readonly options: EditorRunsOptions) {}

  // Arrow properties: the editor hands them to its callers as they are, with no wrapper between.
  readonly start = (request: FlowRunRequest): Promise<StartedRun> => this.begin(request, null)

  /**
   * Runs an interrupted flow run again under its own id: what succeeded in it is kept, and the
   * ledger looks up what was being sent before sending it again, so nothing is paid twice.
   */
  readonly resume = async (request: FlowRunResumeRequest): Promise<StartedRun> => {
    const previous = this.options.ledger.flowRuns.get(request.flowRunId)
    if (!previous) {
      throw new FlowEditorError(
        'FLOW_RUN_NOT_FOUND',
        `There is no flow run ${request.flowRunId} on this computer to resume; run the flow again instead.`,
      )
    }
    const running = this.running.get(request.flowRunId)
    if (running) {
      if (previous.state === 'running') {
        throw new FlowEditorError(
          'RUN_REFUSED',
          'This flow run is still running; wait for it to end.',
        )
      }
      // Ended in the ledger, and its end told to the window, a moment before it leaves here:
      // a Resume pressed at once waits for that, not refused.
      await running.ended
    }
    if (previous.state === 'succeeded') {
      throw new FlowEditorError(
        'RUN_REFUSED',
        'This flow run already finished; there is nothing left to resume.',
      )
    }
    return this.begin({ flow: request.flow, inputs: {}, force: [] }, request.flowRunId)
  }

  /**
   * The flow's runs on this computer, newest first, each with how its nodes ended and whether it
   * can be resumed by the same rule as the editor's Resume (`INTERRUPTED_CODES`), or because it is
   * still marked running while nothing here runs it (Atelier closed in the middle of it).
   */
  readonly list = ({ id }: FlowRef): FlowRunSummary[] => {
    const { ledger, scope } = this.options
    return ledger.flowRuns.ofFlow(scope, id, RUNS_LISTED).map((run) => {
      const last = new Map<string, NodeRunRecord>()
      let firstRemoteRunId: string | null = null
      let spent = 0
      for (const node of ledger.flowRuns.nodes(run.id)) {
        firstRemoteRunId ??= node.remoteRunId
        // A sub-flow's inner nodes are the sub-flow node's own work: it counts once.
        if (node.nodeId.includes('/')) continue
        spent += node.costMicro
        const seen = last.get(node.nodeId)
        if (!seen || seen.attempt < node.attempt) last.set(node.nodeId, node)
      }
      const ended = [...last.values()]
      const count = (state: NodeRunRecord['state']) =>
        ended.filter((node) => node.state === state).length
      const interrupted =
        run.state === 'running'
          ? !this.running.has(run.id)
          : run.state === 'failed' &&
            ended.some(
              (node) =>
                node.state === 'failed' &&
                node.error !== null &&
                INTERRUPTED_CODES.has(node.error.code),
            )
      return {
        flowRunId: run.id,
        state: run.state,
        startedMs: run.startedMs,
        endedMs: run.endedMs,
        // The totals are written when the run ends; before that, what its nodes were charged.
        costMicro: run.endedMs === null ? spent : run.totals.costMicro,
        done: count('succeeded'),
        cached: count('cached'),
        failed: count('failed'),
        resumable: interrupted,
        firstRemoteRunId,
      }
    })
  }

  private readonly begin = async (
    request: FlowRunRequest,
    resumeId: string | null,
  ): Promise<StartedRun> => {
    if (this.closing) {
      throw new FlowEditorError('RUN_REFUSED', 'Atelier is closing; start the run again later.')
    }
    if (this.options.offline?.() === true) throw new FlowEditorError('OFFLINE', OFFLINE_MESSAGE)
    // The one parse of the flow: the IPC contract passes its JSON through untouched.
    let flow = readFlow(request.flow, 'The flow')
    let { inputs, force } = request
    if (request.only !== undefined) {
      flow = upTo(flow, request.only)
      // What the cut left out needs no inputs and is not run, forced or not.
      const names = new Set(flow.inputs.map((input) => input.name))
      inputs = Object.fromEntries(Object.entries(inputs).filter(([name]) => names.has(name)))
      force = force.filter((ref) => flow.nodes.some((n) => n.id === ref || n.slug === ref))
    }

    const flowRunId = resumeId ?? randomUUID()
    const controller = new AbortController()
    const held: FlowRunEvent[] = []
    let live = false
    const send = (event: FlowRunEvent) => {
      try {
        this.options.emit({ flowRunId, event })
      } catch (error) {
        this.options.logger.warn('a flow run event could not be sent', { err: error })
      }
    }
    let started: () => void = () => undefined
    const passed = new Promise<void>((resolve) => {
      started = resolve
    })
    const { ledger, client, catalog, scope, logger } = this.options
    const run = runFlow({
      flow,
      inputs,
      runners: this.options.runners(),
      catalog,
      ledger,
      client,
      profile: scope.profile,
      orgId: scope.orgId,
      force,
      ...(request.concurrency === undefined ? {} : { concurrency: request.concurrency }),
      flowRunId,
      signal: controller.signal,
      onEvent: (event) => {
        if (event.type === 'flow-started') started()
        if (live) send(event)
        else held.push(event)
      },
    })
    const ended = run.then(
      (result) => {
        logger.info(`flow run ${result.state}`, { flowRunId, ...result.totals })
      },
      (error: unknown) => {
        logger.debug('flow run not started', { flowRunId, err: error })
      },
    )
    this.running.set(flowRunId, {
      controller,
      ended: ended.finally(() => this.running.delete(flowRunId)),
    })
    try {
      await Promise.race([passed, run])
    } catch (error) {
      throw refusal(error)
    }
    // After the answer is on its way: the window learns the id first, then every event.
    setImmediate(() => {
      live = true
      for (const event of held.splice(0)) send(event)
    })
    return { flowRunId }
  }

  readonly cancel = ({ flowRunId }: FlowRunRef): null => {
    const run = this.running.get(flowRunId)
    if (!run) {
      throw new FlowEditorError(
        'FLOW_RUN_NOT_FOUND',
        `No flow run ${flowRunId} is running here; it may have ended already.`,
      )
    }
    run.controller.abort()
    return null
  }

  /** Cancels every run (their remote runs too) and waits for them to end. */
  async close(): Promise<void> {
    this.closing = true
    const runs = [...this.running.values()]
    for (const run of runs) run.controller.abort()
    await Promise.all(runs.map((run) => run.ended))
  }
}

/** Why a run did not start, as the editor's error. */
function refusal(error: unknown): unknown {
  if (isFlowRunError(error)) {
    if (error.code === 'FLOW_INVALID') {
      return new FlowEditorError('FLOW_INVALID', error.message, issuesOf(error.problems))
    }
    return new FlowEditorError('RUN_REFUSED', error.message)
  }
  if (isServiceError(error)) {
    return new FlowEditorError('RUN_REFUSED', `The run could not start: ${error.message}`)
  }
  return error
}

/**
 * "Run to here": the flow cut down to these nodes and every node they need (by edges), with the
 * flow inputs and outputs those keep. Nodes keep their ids and settings, so their cache keys
 * are the same as in the whole flow: a later full run reuses what this one made. What the cut
 * leaves out is not validated, so a half-built branch elsewhere does not stop it.
 */
export function upTo(flow: FlowDocument, only: readonly string[]): FlowDocument {
  const idOf = (ref: string) => flow.nodes.find((n) => n.id === ref || n.slug === ref)?.id
  const unknown = only.filter((ref) => idOf(ref) === undefined)
  if (unknown.length > 0) {
    throw new FlowEditorError(
      'FLOW_INVALID',
      `The flow has no node ${unknown.map((ref) => JSON.stringify(ref)).join(', ')} to run to; pick nodes of this flow.`,
      unknown.map((ref) => ({ path: 'only', message: `No node has the id or slug ${ref}.` })),
    )
  }
  const ownerOf = new Map<string, string>()
  for (const node of flow.nodes) for (const output of node.outputs) ownerOf.set(output.id, node.id)
  const byId = new Map(flow.nodes.map((node) => [node.id, node]))
  const kept = new Set<string>()
  const pending = only.map((ref) => idOf(ref) as string)
  for (let id = pending.pop(); id !== undefined; id = pending.pop()) {
    if (kept.has(id)) continue
    kept.add(id)
    for (const input of byId.get(id)?.inputs ?? []) {
      const source =
        input.source_output_id === null ? undefined : ownerOf.get(input.source_output_id)
      if (source !== undefined) pending.push(source)
    }
  }
  const nodes = flow.nodes
    .filter((node) => kept.has(node.id))
    .map((node) => ({
      ...node,
      // A quality gate downstream is not part of the cut: nothing sends the node back.
      inputs: node.inputs.map((input) =>
        input.retry_source_output_id !== null &&
        !kept.has(ownerOf.get(input.retry_source_output_id) ?? '')
          ? { ...input, retry_source_output_id: null }
          : input,
      ),
    }))
  const mappedNames = (field: 'flow_inputs' | 'flow_outputs') =>
    new Set(
      nodes.flatMap((node) => {
        const mapping = node.config[field]
        return isRecord(mapping)
          ? Object.values(mapping).filter((v): v is string => typeof v === 'string')
          : []
      }),
    )
  const usedInputs = mappedNames('flow_inputs')
  const usedOutputs = mappedNames('flow_outputs')
  return {
    ...flow,
    nodes,
    inputs: flow.inputs.filter((input) => usedInputs.has(input.name)),
    outputs: flow.outputs.filter((output) => usedOutputs.has(output.name)),
  }
}
