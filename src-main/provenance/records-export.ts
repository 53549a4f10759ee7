import type { OutputExportRequest, OutputFile } from '../../src-shared/ipc/contracts/outputs'
import { CodedError } from '../errors/coded'
import type { MediaStore } from '../media-store'
import { provenanceOfOutput, provenanceOfRun, type OutputRef, type RecordSources } from './records'
import { flowSlugOf, outputBytes, outputFileName, slugOf, withRecord } from './records-files'
import { mediaOutputsOf, type FoundMedia } from './records-values'

/**
 * Downloads from the app (issue 20): an output as the file the person saves, named as `atelier
 * run --out` names it, with its record inside.
 *
 * Why the media store is opened per download and closed after: a download is one click, and
 * holding a store open for it would tie its lifetime to the core's for nothing; the store is
 * made for several openers of one folder (the editor and the media step open their own).
 */

export type OutputExportErrorCode = 'NOT_FOUND' | 'OUTPUT_UNAVAILABLE'

export class OutputExportError extends CodedError<OutputExportErrorCode> {
  override readonly name = 'OutputExportError'
}

export interface OutputExports {
  export(request: OutputExportRequest): Promise<OutputFile>
}

export interface OutputExportOptions {
  sources: RecordSources
  /** A media store of the app's folder, closed by the caller of `export` when done. */
  openMedia: () => MediaStore
}

const DONE = new Set(['succeeded', 'cached'])

export function openOutputExports(options: OutputExportOptions): OutputExports {
  return {
    export: async (request) => {
      const found = 'runId' in request ? ofRun(options, request) : ofOutput(options, request)
      const media = options.openMedia()
      try {
        let bytes: Buffer
        try {
          bytes = await outputBytes(media, {
            sha256: found.media.sha256,
            contentType: found.media.mediaType,
            url: found.media.url,
          })
        } catch (error) {
          throw new OutputExportError(
            'OUTPUT_UNAVAILABLE',
            'This output is no longer on this computer and cannot be fetched again now; check the connection, or run the flow again to make it.',
            undefined,
            { cause: error },
          )
        }
        const file = withRecord(bytes, found.record)
        return {
          fileName: outputFileName(
            found.slug,
            found.media.name,
            found.media.index + 1,
            found.media.mediaType,
          ),
          mediaType: found.media.mediaType,
          base64: Buffer.from(file.bytes).toString('base64'),
          recorded: file.recorded,
        }
      } finally {
        await media.close()
      }
    },
  }
}

interface Found {
  media: FoundMedia
  record: ReturnType<typeof provenanceOfOutput>
  slug: string
}

function notFound(what: string): OutputExportError {
  return new OutputExportError(
    'NOT_FOUND',
    `${what} is not known on this computer; sync, or open it from the run that made it.`,
  )
}

function ofOutput(options: OutputExportOptions, request: OutputRef): Found {
  const { flowRuns } = options.sources.ledger
  const nodeRun = flowRuns
    .nodes(request.flowRunId)
    .filter((node) => node.nodeId === request.nodeId && DONE.has(node.state))
    .sort((a, b) => b.attempt - a.attempt)[0]
  const media = mediaOutputsOf(nodeRun?.outputs ?? {}).find(
    (item) => item.name === request.output && item.index === request.index,
  )
  if (!media)
    throw notFound(`Output ${request.output} (item ${request.index + 1}) of this flow run`)
  const record = provenanceOfOutput(options.sources, request)
  const document = flowRuns.document(request.flowRunId)
  const flowId = flowRuns.get(request.flowRunId)?.flowId ?? 'flow'
  return { media, record, slug: document ? flowSlugOf(document) : slugOf(flowId) }
}

function ofRun(options: OutputExportOptions, request: { runId: string; index: number }): Found {
  const { sources } = options
  const nodeRun = sources.ledger.flowRuns.byRemoteRunId(request.runId)
  const run = sources.mirror.runs.get(request.runId)
  const media =
    mediaOutputsOf(nodeRun?.outputs ?? {})[request.index] ??
    mediaOutputsOf(run?.output ?? {})[request.index]
  if (!media) throw notFound(`Output ${request.index + 1} of run ${request.runId}`)
  const record = provenanceOfRun(sources, request.runId, request.index)
  const slug = record ? flowSlugOf(record.flow) : slugOf(run?.model_slug ?? 'run')
  return { media, record, slug }
}
