import { randomUUID } from 'node:crypto'
import type { Flow } from '../../src-shared/api'
import type {
  FlowCreate,
  FlowImport,
  FlowRef,
  FlowRename,
  FlowSave,
  FlowSource,
  FlowSummary,
  FlowVersion,
  FlowVersionRef,
  FlowVersionSave,
  StoredFlow,
} from '../../src-shared/domain/flow-editor'
import { timeMs, type Ledger, type LocalFlowRecord, type LocalFlowScope, type Mirror } from '../db'
import type { FlowDocument } from '../executor'
import type { Logger } from '../log'
import { isServiceError, type ServiceClient } from '../service'
import {
  asJson,
  contentOf,
  emptyFlow,
  fileNameOf,
  flowFileText,
  localCopy,
  readFlow,
  withFlowId,
} from './documents'
import { FlowEditorError } from './errors'

export interface FlowLibraryOptions {
  ledger: Ledger
  mirror: Mirror
  client: ServiceClient
  scope: LocalFlowScope
  clock: () => number
  logger: Logger
  /** Aborted when Atelier closes: a template fetch under way stops. */
  signal: AbortSignal
  /**
   * True while the sync knows the service cannot be reached: nothing is asked of it then, so
   * the list and a flow that cannot be opened answer at once from what this computer has.
   */
  isOffline?: () => boolean
}

/** How long the first list waits for the templates; after that it shows what the mirror has. */
const TEMPLATES_WAIT_MS = 5_000
/** After a failed template fetch (offline), lists do not try again before this. */
const TEMPLATES_RETRY_MS = 60_000
/**
 * How long opening a flow waits for the service to send its nodes: offline, a plain reason
 * must come at once, not after the client's retries (seconds each) have run out.
 */
const OPEN_WAIT_MS = 3_000
const PAGE = 500
const GRAPH = 'nodes,inputs,outputs'

const hasGraph = (flow: Flow): flow is FlowDocument =>
  Array.isArray(flow.nodes) && Array.isArray(flow.inputs) && Array.isArray(flow.outputs)

const unreachable = (error: unknown) =>
  isServiceError(error) && (error.status === 0 || error.status >= 500)

/**
 * The flows a person can open: their own (the ledger's local flows), the service's (the
 * mirror's flows) and templates. A template is a flow whose `flow_type_code` is `template` or
 * one a solution links: the service's flow templates (GET /v1/flow-templates) are fetched with
 * their graphs into the mirror's flows the first time the list is asked for in a session, since
 * the sync does not walk them and solutions only name them.
 */
export class FlowLibrary {
  private templatesFetched = false
  private templateFetch: Promise<void> | null = null
  private templatesFailedMs = Number.NEGATIVE_INFINITY

  constructor(private readonly options: FlowLibraryOptions) {}

  private get scope() {
    return this.options.scope
  }

  private get local() {
    return this.options.ledger.localFlows
  }

  async list(): Promise<FlowSummary[]> {
    await this.templates()
    const linked = this.linkedTemplates()
    const summaries: FlowSummary[] = this.local.list(this.scope).map((flow) => ({
      id: flow.id,
      name: flow.name,
      source: 'local',
      description: flow.description,
      nodeCount: flow.nodeCount,
      updatedMs: flow.updatedMs,
    }))
    for (const flow of this.serviceFlows()) {
      summaries.push(serviceSummary(flow, sourceOf(flow, linked)))
    }
    return summaries.sort((a, b) => b.updatedMs - a.updatedMs || a.name.localeCompare(b.name))
  }

  async get({ id }: FlowRef): Promise<StoredFlow> {
    const local = this.liveLocal(id)
    if (local) return this.stored(local)
    const { flow, source } = await this.serviceFlow(id)
    return { ...serviceSummary(flow, source), flow: asJson(flow), versions: [] }
  }

  async create({ name, from }: FlowCreate): Promise<StoredFlow> {
    const id = randomUUID()
    const now = new Date(this.options.clock()).toISOString()
    const flow =
      from === undefined
        ? emptyFlow(id, name, now)
        : localCopy(await this.document(from), id, name, now)
    return this.stored(this.local.create(this.scope, id, contentOf(flow)))
  }

  save({ id, flow, baseUpdatedMs }: FlowSave): { updatedMs: number } {
    this.editable(id)
    const document = readFlow(flow, 'The flow')
    if (document.id !== id) {
      throw new FlowEditorError(
        'FLOW_INVALID',
        `The flow file's id is ${document.id}, not ${id}; a flow keeps its id. To keep it as another flow, import it or make a copy.`,
        [{ path: 'id', message: `Must be ${id}, the id of the flow being saved.` }],
      )
    }
    const written = this.local.update(this.scope, id, contentOf(document), baseUpdatedMs)
    if (written.ok) return { updatedMs: written.updatedMs }
    if (written.reason === 'conflict') {
      throw new FlowEditorError(
        'CONFLICT',
        `This flow was saved elsewhere (at ${new Date(written.updatedMs).toISOString()}) since it was opened here; reload it to see that version, or make a copy to keep this one.`,
      )
    }
    throw notFound(id)
  }

  rename({ id, name }: FlowRename): FlowSummary {
    const record = this.editable(id)
    const document = { ...readFlow(record.flow, 'The stored flow'), name }
    const written = this.local.update(this.scope, id, contentOf(document))
    if (!written.ok) throw notFound(id)
    return this.summary(id)
  }

  delete({ id }: FlowRef): null {
    this.owned(id)
    this.local.trash(this.scope, id)
    return null
  }

  restore({ id }: FlowRef): FlowSummary {
    this.owned(id)
    this.local.restore(this.scope, id)
    return this.summary(id)
  }

  /** Importing the same file twice makes two flows, so the second is named "Name (2)". */
  import({ json }: FlowImport): StoredFlow {
    const id = randomUUID()
    const read = withFlowId(readFlow(json, 'The file'), id)
    const taken = this.local.list(this.scope).map((flow) => flow.name)
    const flow = { ...read, name: uniqueName(read.name, taken) }
    return this.stored(this.local.create(this.scope, id, contentOf(flow)))
  }

  async export({ id }: FlowRef): Promise<{ fileName: string; json: string }> {
    const flow = await this.document(id)
    return { fileName: fileNameOf(flow), json: flowFileText(flow) }
  }

  saveVersion({ id, name }: FlowVersionSave): FlowVersion {
    const record = this.editable(id)
    const { version, createdMs } = this.local.addVersion(id, name, record.flow)
    return { version, name, createdMs }
  }

  /**
   * The version becomes the current flow; what was current is kept first as a version of its
   * own ("Before restoring …"), so a restore is undone by restoring that one.
   */
  restoreVersion({ id, version }: FlowVersionRef): StoredFlow {
    const record = this.editable(id)
    const kept = this.local.version(id, version)
    if (!kept) {
      throw new FlowEditorError(
        'FLOW_NOT_FOUND',
        `This flow has no version ${String(version)}; pick one of its versions from the list.`,
      )
    }
    const document = withFlowId(readFlow(kept.flow, `Version ${String(version)}`), id)
    this.options.ledger.transaction(() => {
      this.local.addVersion(id, `Before restoring “${kept.name}”`, record.flow)
      const written = this.local.update(this.scope, id, contentOf(document))
      if (!written.ok) throw notFound(id)
    })
    return this.stored(this.editable(id))
  }

  /** A flow file of any source (not the trash), for a copy, an export or a run. */
  async document(id: string): Promise<FlowDocument> {
    const local = this.liveLocal(id)
    if (local) return readFlow(local.flow, 'The stored flow')
    return (await this.serviceFlow(id)).flow
  }

  /** Local flows out of the trash, with their files, for the palette's sub-flows. */
  localFlows(): FlowDocument[] {
    return this.local.list(this.scope).flatMap((summary) => {
      const record = this.local.get(this.scope, summary.id)
      if (!record) return []
      try {
        return [readFlow(record.flow, 'The stored flow')]
      } catch {
        return []
      }
    })
  }

  private liveLocal(id: string): LocalFlowRecord | null {
    const record = this.local.get(this.scope, id)
    return record && record.deletedMs === null ? record : null
  }

  /** A local flow of this profile, in the trash or not; READ_ONLY for the service's. */
  private owned(id: string): LocalFlowRecord {
    const record = this.local.get(this.scope, id)
    if (record) return record
    if (this.options.mirror.flows.get({ orgId: this.scope.orgId }, id)) throw readOnly()
    throw notFound(id)
  }

  /** A local flow out of the trash: the only kind that changes. */
  private editable(id: string): LocalFlowRecord {
    const record = this.owned(id)
    if (record.deletedMs !== null) {
      throw new FlowEditorError(
        'FLOW_NOT_FOUND',
        'This flow is in the trash; restore it before changing it.',
      )
    }
    return record
  }

  private summary(id: string): FlowSummary {
    const { flow: _flow, versions: _versions, ...summary } = this.stored(this.owned(id))
    return summary
  }

  private stored(record: LocalFlowRecord): StoredFlow {
    return {
      id: record.id,
      name: record.name,
      source: 'local',
      description: record.description,
      nodeCount: record.nodeCount,
      updatedMs: record.updatedMs,
      flow: record.flow,
      versions: this.local
        .versions(record.id)
        .map(({ version, name, createdMs }) => ({ version, name, createdMs })),
    }
  }

  /**
   * The service's flow or template with its graph: from the mirror, else fetched and kept.
   * "Deleted" is said only when the service answered 404; a flow that cannot be fetched because
   * the service is out of reach says so (FLOW_NOT_SYNCED), quickly (`OPEN_WAIT_MS`).
   */
  private async serviceFlow(id: string): Promise<{ flow: FlowDocument; source: FlowSource }> {
    const scope = { orgId: this.scope.orgId }
    let stored = this.options.mirror.flows.get(scope, id)
    if (!stored) {
      await this.templates()
      stored = this.options.mirror.flows.get(scope, id)
    }
    if (stored && hasGraph(stored)) {
      return {
        flow: readFlow(stored, 'The service’s flow'),
        source: sourceOf(stored, this.linkedTemplates()),
      }
    }
    const template = stored !== null && sourceOf(stored, this.linkedTemplates()) === 'template'
    if (this.offline()) throw notOnThisComputer(stored)
    let fetched: Flow
    try {
      const signal = AbortSignal.any([this.options.signal, AbortSignal.timeout(OPEN_WAIT_MS)])
      const headers = { 'X-Organization-Id': this.scope.orgId }
      fetched = template
        ? await this.options.client.get('/v1/flow-templates/{id}', {
            params: { path: { id }, query: { include: GRAPH } },
            headers,
            signal,
          })
        : await this.options.client.get('/v1/flows/{flow_id}', {
            params: { path: { flow_id: id }, query: { include: GRAPH } },
            headers,
            signal,
          })
    } catch (error) {
      if (isServiceError(error) && error.status === 404) throw goneFromService(id, stored)
      if (this.options.signal.aborted || !unreachable(error)) throw error
      throw notOnThisComputer(stored)
    }
    if (!hasGraph(fetched)) throw notOnThisComputer(stored)
    this.options.mirror.flows.upsertPage([fetched], scope)
    return {
      flow: readFlow(fetched, 'The service’s flow'),
      source: sourceOf(fetched, this.linkedTemplates()),
    }
  }

  private offline(): boolean {
    return this.options.isOffline?.() ?? false
  }

  private serviceFlows(): Flow[] {
    const flows: Flow[] = []
    const scope = { orgId: this.scope.orgId }
    for (let after: string | null = null; ;) {
      const page = this.options.mirror.flows.list(scope, { limit: PAGE, after })
      flows.push(...page.items)
      if (!page.next) return flows
      after = page.next
    }
  }

  /** The flows the mirror's solutions link: the service's templates. */
  private linkedTemplates(): Set<string> {
    const ids = new Set<string>()
    const scope = { orgId: this.scope.orgId }
    for (let after: string | null = null; ;) {
      const page = this.options.mirror.solutions.list(scope, { limit: PAGE, after })
      for (const solution of page.items) {
        for (const link of solution.solution_flows) ids.add(link.flow_id)
      }
      if (!page.next) return ids
      after = page.next
    }
  }

  /**
   * Fetches the templates once a session, and waits for that fetch (bounded); offline, the
   * mirror's copies from an earlier session are listed and the fetch is tried again later.
   */
  private async templates(): Promise<void> {
    if (this.templatesFetched || this.offline()) return
    if (!this.templateFetch) {
      if (this.options.clock() - this.templatesFailedMs < TEMPLATES_RETRY_MS) return
      this.templateFetch = this.fetchTemplates().finally(() => {
        this.templateFetch = null
      })
    }
    await this.templateFetch
  }

  private async fetchTemplates(): Promise<void> {
    const scope = { orgId: this.scope.orgId }
    try {
      const templates: Flow[] = []
      const signal = AbortSignal.any([this.options.signal, AbortSignal.timeout(TEMPLATES_WAIT_MS)])
      for await (const template of this.options.client.list('/v1/flow-templates', {
        params: { query: { include: GRAPH, limit: 100 } },
        headers: { 'X-Organization-Id': this.scope.orgId },
        signal,
      })) {
        templates.push(template)
      }
      this.options.mirror.flows.upsertPage(templates, scope)
      this.templatesFetched = true
    } catch (error) {
      this.templatesFailedMs = this.options.clock()
      this.options.logger.info('the flow templates could not be fetched; listing what is here', {
        err: error,
      })
    }
  }
}

function sourceOf(flow: Flow, linked: ReadonlySet<string>): FlowSource {
  return flow.flow_type_code === 'template' || linked.has(flow.id) ? 'template' : 'service'
}

function serviceSummary(flow: Flow, source: FlowSource): FlowSummary {
  return {
    id: flow.id,
    name: flow.name,
    source,
    description: flow.description,
    // A flow synced from a list comes without its nodes; opening it fetches them.
    nodeCount: flow.nodes?.length ?? 0,
    updatedMs: timeMs(flow.updated_at, 'flow.updated_at'),
  }
}

function notFound(id: string): FlowEditorError {
  return new FlowEditorError(
    'FLOW_NOT_FOUND',
    `There is no flow ${id} here; it may have been deleted. Refresh the list of flows.`,
  )
}

/** The service itself answered 404: only then may the flow be called deleted. */
function goneFromService(id: string, stored: Flow | null): FlowEditorError {
  const what = stored ? `“${stored.name}”` : `flow ${id}`
  return new FlowEditorError(
    'FLOW_NOT_FOUND',
    `The service has no ${what} any more: it was deleted, or this profile cannot see it. Refresh the list of flows.`,
  )
}

/** The service cannot be reached and this computer does not have the flow's nodes. */
function notOnThisComputer(stored: Flow | null): FlowEditorError {
  const what = stored ? `“${stored.name}”` : 'this flow'
  return new FlowEditorError(
    'FLOW_NOT_SYNCED',
    `You are offline and ${what} was never opened on this computer, so its nodes are not here. Connect to the service, then open it again.`,
  )
}

/** The name a file manager would give: "Portrait", then "Portrait (2)", "Portrait (3)"… */
export function uniqueName(name: string, taken: readonly string[]): string {
  const names = new Set(taken)
  if (!names.has(name)) return name
  // "Portrait (2)" imported again becomes "Portrait (3)", not "Portrait (2) (2)".
  // Sliced as a copy's name is, so that the suffix keeps the name within what a flow allows.
  const base = (/^(.*) \((\d+)\)$/.exec(name)?.[1] ?? name).slice(0, 190)
  for (let n = 2; ; n++) {
    const candidate = `${base} (${String(n)})`
    if (!names.has(candidate)) return candidate
  }
}

function readOnly(): FlowEditorError {
  return new FlowEditorError(
    'READ_ONLY',
    'This flow comes from the service (or is a template) and cannot be changed here; make a copy and edit that.',
  )
}
