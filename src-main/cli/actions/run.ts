import { createHash } from 'node:crypto'
import { existsSync, readFileSync, statSync } from 'node:fs'
import { extname, resolve } from 'node:path'
import type { FlowRunEvent } from '../../../src-shared/domain/flow-run'
import { plural } from '../../../src-shared/domain/plural'
import { ledgerPins } from '../../sync'
import { MEDIA_CAP_BYTES, MEDIA_DIR } from '../../core/steps'
import { openDatabases } from '../../db'
import {
  credits,
  isFlowRunError,
  onlineCatalog,
  parseFlowDocument,
  runFlow,
  type FlowDocument,
  type FlowProblem,
  type FlowRunResult,
  type MediaRef,
} from '../../executor'
import { listElement } from '../../executor/validate'
import { flowRunners } from '../../flows/runners'
import { MediaStore } from '../../media-store'
import { mediaTypeOf } from '../../provenance'
import { writeOutputFiles, type WrittenOutput } from '../../provenance/records-files'
import { RerunError, rerunOfPicture, type PictureRerun } from '../../provenance/records-rerun'
import { workflowFlowOf } from '../../workflows'
import { connect } from '../connect'
import { EXIT } from '../exit-codes'
import { organizationOf } from '../organization'
import type { CommandContext } from '../context'
import { CliError } from '../errors'
import { forcedNodeIds } from '../force'

const MEDIA_TYPES: Record<string, string> = {
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.jpeg': 'image/jpeg',
  '.webp': 'image/webp',
  '.gif': 'image/gif',
  '.mp4': 'video/mp4',
  '.webm': 'video/webm',
  '.mov': 'video/quicktime',
}

const usage = (message: string) => new CliError(message, EXIT.usage, 'USAGE')

/** A flow file's problems, or the flow, from a path; null when FLOW names no file. */
function readFlowFile(ref: string): FlowDocument | null {
  const path = resolve(ref)
  if (!existsSync(path) || !statSync(path).isFile()) return null
  let json: unknown
  try {
    json = JSON.parse(readFileSync(path, 'utf8'))
  } catch (error) {
    throw usage(
      `${ref} is not JSON (${error instanceof Error ? error.message : String(error)}); a flow file is the service's flow with its graph, as JSON.`,
    )
  }
  const parsed = parseFlowDocument(json)
  if (!parsed.ok) throw problemsError(parsed.problems, `${ref} is not a flow file`)
  return parsed.flow
}

/** The bytes of FLOW when it is a picture (a PNG, WebP, JPEG… that may carry a record). */
function readPicture(ref: string): Buffer | null {
  const path = resolve(ref)
  if (!existsSync(path) || !statSync(path).isFile()) return null
  const bytes = readFileSync(path)
  return mediaTypeOf(bytes)?.startsWith('image/') ? bytes : null
}

/** The flow that made the picture, from its record; exit 1 with the reading's words if none. */
function pictureRerun(bytes: Buffer, media: MediaStore): PictureRerun {
  try {
    return rerunOfPicture(bytes, (sha256) => {
      const entry = media.stat(sha256)
      return entry ? { path: entry.path, contentType: entry.contentType } : null
    })
  } catch (error) {
    if (error instanceof RerunError) throw new CliError(error.message, EXIT.failed, error.code)
    throw error
  }
}

/** The files --out wrote, one line each; the ones that carry no record say so. */
function filesText(files: readonly WrittenOutput[]): string {
  if (files.length === 0) return '\nNo output is a file to write.'
  const lines = files.map(
    (file) =>
      `  ${file.path}${file.recorded ? '' : ' (carries no record: its type cannot hold one)'}`,
  )
  return `\nWrote ${files.length === 1 ? '1 file' : `${files.length} files`}:\n${lines.join('\n')}`
}

function problemsError(problems: readonly FlowProblem[], what: string): CliError {
  const lines = problems.map((p) => {
    const where = [
      p.nodeId ? `node ${p.nodeId}` : null,
      p.inputName ? `input ${p.inputName}` : null,
    ]
      .filter(Boolean)
      .join(', ')
    return `  - ${p.code} at ${where || p.path}: ${p.message}`
  })
  return new CliError(`${what}:\n${lines.join('\n')}`, EXIT.usage, 'FLOW_INVALID')
}

/** `name=value` by the flow input's type; `name=@path` reads a file (media: a local ref). */
function parseInputs(flow: FlowDocument, given: readonly string[]): Record<string, unknown> {
  const values: Record<string, unknown> = {}
  for (const item of given) {
    const at = item.indexOf('=')
    if (at <= 0)
      throw usage(`--input takes name=value (or name=@file), not ${JSON.stringify(item)}.`)
    const name = item.slice(0, at)
    const text = item.slice(at + 1)
    const type = flow.inputs.find((input) => input.name === name)?.variable_type_code ?? 'text'
    values[name] = text.startsWith('@') ? fromFile(name, text.slice(1), type) : fromText(text, type)
  }
  return values
}

function fromFile(name: string, file: string, type: string): unknown {
  const path = resolve(file)
  let bytes: Buffer
  try {
    bytes = readFileSync(path)
  } catch {
    throw usage(`--input ${name}=@${file}: the file cannot be read; check the path.`)
  }
  const element = listElement(type) ?? type
  if (element === 'image' || element === 'video') {
    const ref: MediaRef = {
      kind: 'media',
      sha256: createHash('sha256').update(bytes).digest('hex'),
      content_type: MEDIA_TYPES[extname(path).toLowerCase()] ?? 'application/octet-stream',
      url: path,
    }
    return ref
  }
  return fromText(bytes.toString('utf8'), type)
}

function fromText(text: string, type: string): unknown {
  if (listElement(type) !== null) {
    try {
      const parsed: unknown = JSON.parse(text)
      if (Array.isArray(parsed)) return parsed
    } catch {
      // One item per line, for lists typed on the command line.
    }
    return text.split('\n').filter((line) => line.trim() !== '')
  }
  if (['integer', 'number', 'seed'].includes(type)) {
    const number = Number(text)
    return text.trim() !== '' && Number.isFinite(number) ? number : text
  }
  if (type === 'boolean') return text === 'true' ? true : text === 'false' ? false : text
  return text
}

/** One line per event that matters to someone watching. */
function lineOf(event: FlowRunEvent, label: (nodeId: string) => string): string | null {
  switch (event.type) {
    case 'flow-started':
      return `flow run ${event.flowRunId}${event.resumed ? ' (resumed)' : ''}. ${estimateWords(event)}`
    case 'node-running':
      return `${label(event.nodeId)}: started${event.attempt > 1 ? ` (attempt ${event.attempt})` : ''}`
    case 'node-cached':
      return `${label(event.nodeId)}: cached`
    case 'node-succeeded':
      return `${label(event.nodeId)}: succeeded, ${credits(event.costMicro)} credits`
    case 'node-failed':
      return `${label(event.nodeId)}: failed: ${event.error.message}`
    case 'node-skipped':
      return `${label(event.nodeId)}: skipped (${event.reason === 'upstream-failed' ? 'a node it needs failed' : 'branch not taken'})`
    case 'node-canceled':
      return `${label(event.nodeId)}: canceled`
    default:
      return null
  }
}

/**
 * "Estimate: 0.0000 credits (3 nodes from the cache)": a run that will be answered by the cache
 * says so, or its 0 would read as a mistake (and a price, as a charge that will not come).
 */
function estimateWords(event: Extract<FlowRunEvent, { type: 'flow-started' }>): string {
  const cached = event.cachedNodes ?? 0
  const fromCache = cached > 0 ? ` (${plural(cached, 'node')} from the cache)` : ''
  return `Estimate: ${credits(event.estimateMicro)} credits${fromCache}`
}

function summaryOf(result: FlowRunResult): string {
  const t = result.totals
  return `${result.state}: ${t.dispatched} dispatched, ${t.cached} cached, ${t.skipped} skipped; cost ${credits(t.costMicro)} credits (estimated ${credits(t.estimateMicro)})`
}

/** The flags of `atelier run`, as commander hands them over. */
export interface RunFlags {
  input: string[]
  concurrency?: string
  failFast: boolean
  force: string[]
  resume?: string
  /** A folder: each media output is written there as a file with its record inside. */
  out?: string
}

/**
 * `atelier run FLOW`: the flow (a file, or one the organization has) run on this machine, its
 * events told as they happen.
 */
export async function run(
  context: CommandContext,
  ref: string,
  flags: RunFlags,
  concurrency: number | undefined,
): Promise<void> {
  const picture = readPicture(ref)
  const fromFile = picture ? null : readFlowFile(ref)
  const globals = context.globals()
  const { profile, client, logger } = await connect(context, { command: 'run' })
  const dbs = openDatabases(globals.home)
  let media: MediaStore | null = null
  const controller = new AbortController()
  const stop = () => {
    controller.abort()
  }
  process.once('SIGINT', stop)
  try {
    const orgId = await organizationOf(client, profile.organization_id)
    const online = onlineCatalog({ mirror: dbs.mirror, client, orgId })
    media = new MediaStore({
      dir: `${globals.home}/${MEDIA_DIR}`,
      maxBytes: MEDIA_CAP_BYTES,
      isPinned: ledgerPins(dbs.ledger),
    })
    const rerun = picture ? pictureRerun(picture, media) : null
    if (rerun?.warning) context.io.stderr(`warning: ${rerun.warning}\n`)
    const flow =
      rerun?.flow ??
      fromFile ??
      (await online.findFlow(ref, controller.signal)) ??
      // A workflow runs as a flow of one node whose inputs and outputs are its own.
      (await workflowFlowOf({ client, mirror: dbs.mirror, orgId, signal: controller.signal }, ref))
    if (!flow) {
      throw usage(
        `${ref} is neither a flow file nor a flow or workflow this organization has (by id or slug); check the name, or run atelier sync.`,
      )
    }
    const inputs = { ...rerun?.inputs, ...parseInputs(flow, flags.input) }
    const force = forcedNodeIds(flow, flags.force)
    const labels = new Map(flow.nodes.map((node) => [node.id, node.slug ?? node.label]))
    const label = (nodeId: string) =>
      nodeId
        .split('/')
        .map((id) => labels.get(id) ?? id)
        .join('/')
    let result: FlowRunResult
    try {
      result = await runFlow({
        flow,
        inputs,
        runners: flowRunners({
          client,
          ledger: dbs.ledger,
          mirror: dbs.mirror,
          media,
          profile: profile.name,
          orgId,
        }),
        catalog: online,
        ledger: dbs.ledger,
        client,
        profile: profile.name,
        orgId,
        ...(concurrency === undefined ? {} : { concurrency }),
        failurePolicy: flags.failFast ? 'fail-fast' : 'finish-independent',
        force,
        ...(rerun ? { seeds: rerun.seeds } : {}),
        ...(flags.resume ? { flowRunId: flags.resume } : {}),
        signal: controller.signal,
        onEvent: (event) => {
          logger.debug(`flow run ${event.type}`, { ...event })
          if (globals.json) return
          const line = lineOf(event, label)
          if (line !== null) context.io.stdout(`${line}\n`)
        },
      })
    } catch (error) {
      if (isFlowRunError(error) && error.code === 'FLOW_INVALID') {
        throw problemsError(error.problems, 'The flow cannot run; nothing was started')
      }
      if (isFlowRunError(error)) throw new CliError(error.message, EXIT.failed, error.code)
      throw error
    }
    logger.info(`flow run ${result.state}`, { flowRunId: result.flowRunId, ...result.totals })
    if (result.state !== 'succeeded' && globals.json) {
      // Scripts get one JSON document: the error, naming the flow run to look at.
      throw new CliError(
        `Flow run ${result.flowRunId} ${result.state}: ${result.error?.message ?? 'see its record'}`,
        EXIT.failed,
        result.error?.code ?? result.state.toUpperCase(),
      )
    }
    const files =
      flags.out !== undefined && result.state === 'succeeded'
        ? await writeOutputFiles({
            sources: { ledger: dbs.ledger, mirror: dbs.mirror, media },
            media,
            flow,
            flowRunId: result.flowRunId,
            outputs: result.outputs,
            dir: resolve(flags.out),
          })
        : null
    context.print(
      {
        flowRunId: result.flowRunId,
        state: result.state,
        totals: result.totals,
        outputs: result.outputs,
        error: result.error,
        nodes: result.nodes,
        ...(files ? { files } : {}),
      },
      summaryOf(result) + (files ? filesText(files) : ''),
    )
    if (result.state !== 'succeeded') {
      throw new CliError(
        result.error?.message ?? `The flow run was ${result.state}.`,
        EXIT.failed,
        result.error?.code ?? result.state.toUpperCase(),
      )
    }
  } finally {
    process.off('SIGINT', stop)
    await media?.close()
    dbs.close()
    logger.close()
  }
}
