import cliProgress from 'cli-progress'
import { openDatabases } from '../../db'
import {
  isUploadScanError,
  startFolderUpload,
  watchFolder,
  type FileProgress,
  type SniffedMediaType,
  type FolderUploadOptions,
  type FolderUploadSummary,
  type SkippedCounts,
  type UploadProgress,
} from '../../uploads'
import { plural } from '../../../src-shared/domain/plural'
import { connect } from '../connect'
import { EXIT } from '../exit-codes'
import { processIo, type CliIo } from '../io'
import { organizationOf } from '../organization'
import type { CommandContext } from '../context'
import { CliError } from '../errors'

const mib = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MiB`

/** Why a file was left out, in the words the summary names it with. */
const LEFT_OUT_WORDS: Record<keyof SkippedCounts, string> = {
  system: 'system file',
  hidden: 'hidden',
  symlink: 'link, not followed',
  specialFile: 'not a regular file',
  excluded: 'matched --exclude',
  notIncluded: 'matched no --include',
  notMedia: 'not an image or video',
}

function summaryText(summary: FolderUploadSummary): string {
  const { files } = summary
  // "already there": finished by an earlier upload of the folder, so nothing was sent for them.
  const counts = [
    `${files.uploaded} uploaded`,
    ...(files.already > 0 ? [`${files.already} already there`] : []),
    `${files.duplicates} skipped as ${files.duplicates === 1 ? 'a duplicate' : 'duplicates'}`,
    `${files.failed} failed`,
    ...(files.left > 0 ? [`${files.left} left for the next upload`] : []),
  ]
  const lines = [
    `${counts.join(', ')} (${mib(summary.bytes.sent)} sent in ${(summary.elapsedMs / 1000).toFixed(1)} s)`,
  ]
  for (const failure of summary.failures) {
    lines.push(`  failed ${failure.relativePath}: ${failure.code}: ${failure.message}`)
  }
  for (const problem of summary.problems) {
    lines.push(`  unreadable ${problem.relativePath}: ${problem.code}: ${problem.message}`)
  }
  const leftOut = (Object.values(summary.skipped) as number[]).reduce((sum, n) => sum + n, 0)
  if (leftOut > 0) {
    lines.push(`  left out: ${plural(leftOut, 'file or folder', 'files or folders')}`)
    for (const entry of summary.leftOut) {
      lines.push(`    ${entry.relativePath} (${LEFT_OUT_WORDS[entry.reason]})`)
    }
    const unnamed = leftOut - summary.leftOut.length
    if (unnamed > 0) lines.push(`    and ${unnamed} more`)
  }
  return lines.join('\n')
}

/**
 * On a terminal, one bar for the bytes (files done/total, rate, ETA); anywhere else a line per
 * file that finishes or fails, so a log tells each file's fate once.
 */
function progressDisplay(io: CliIo): {
  onProgress: (p: UploadProgress) => void
  onFile: (f: FileProgress) => void
  stop: () => void
} {
  const terminal = io.stderr === processIo.stderr && process.stderr.isTTY
  if (!terminal) {
    return {
      onProgress: () => undefined,
      onFile: (f) => {
        if (f.state === 'done') io.stderr(`uploaded ${f.relativePath}\n`)
        else if (f.state === 'duplicate') io.stderr(`duplicate ${f.relativePath}\n`)
        else if (f.state === 'failed') {
          io.stderr(`failed ${f.relativePath}: ${f.error?.code ?? ''} ${f.error?.message ?? ''}\n`)
        }
      },
      stop: () => undefined,
    }
  }
  const bar = new cliProgress.SingleBar({
    stream: process.stderr,
    hideCursor: true,
    barsize: 30,
    format: '{phase} {bar} {done}/{total} MiB | {files} files | {rate} MiB/s | ETA {eta_text}',
  })
  let started = false
  return {
    onProgress: (p) => {
      const payload = {
        phase: p.phase.padEnd(9),
        done: (p.bytes.done / 1024 / 1024).toFixed(1),
        total: (p.bytes.total / 1024 / 1024).toFixed(1),
        files: `${p.files.done + p.files.duplicates + p.files.failed}/${p.files.total}`,
        rate: (p.rate / 1024 / 1024).toFixed(1),
        eta_text: p.etaSeconds === null ? '–' : `${p.etaSeconds}s`,
      }
      if (!started) {
        bar.start(Math.max(p.bytes.total, 1), p.bytes.done, payload)
        started = true
      }
      bar.setTotal(Math.max(p.bytes.total, 1))
      bar.update(p.bytes.done, payload)
    },
    onFile: () => undefined,
    stop: () => {
      if (started) bar.stop()
    },
  }
}

/** The flags of `atelier upload`, as commander hands them over. */
export interface UploadFlags {
  folder?: string | false
  concurrency?: string
  parts?: string
  include: string[]
  exclude: string[]
  media?: string
  watch: boolean
}

/** What the flags say about how to send, checked. */
export interface UploadChoices {
  concurrency: number
  partsInFlight: number
  mediaTypes: SniffedMediaType[]
}

/**
 * `atelier upload DIR`: the folder sent into the assets, once or (`--watch`) until stopped, with
 * progress on stderr and the summary on stdout.
 */
export async function upload(
  context: CommandContext,
  dir: string,
  flags: UploadFlags,
  { concurrency, partsInFlight, mediaTypes }: UploadChoices,
): Promise<void> {
  const globals = context.globals()
  const { profile, client, logger } = await connect(context, { command: 'upload' })
  let orgId: string
  try {
    orgId = await organizationOf(client, profile.organization_id)
  } catch (error) {
    logger.close()
    throw error
  }
  const dbs = openDatabases(globals.home)
  const display = progressDisplay(context.io)
  const options: FolderUploadOptions = {
    service: client,
    uploads: dbs.ledger.uploads,
    profile: profile.name,
    orgId,
    root: dir,
    ...(flags.folder === false ? { folder: null } : flags.folder ? { folder: flags.folder } : {}),
    include: flags.include,
    exclude: flags.exclude,
    mediaTypes,
    concurrency,
    partsInFlight,
    onProgress: display.onProgress,
    onFile: (file) => {
      if (file.state === 'failed') logger.warn(`upload failed ${file.relativePath}`, { ...file })
      display.onFile(file)
    },
  }
  try {
    if (flags.watch) {
      await watchUntilInterrupted(context, options, display.stop)
      return
    }
    const upload = startFolderUpload(options)
    // Ctrl-C cancels: what was sent stays, and the next upload of the folder goes on.
    const stop = () => {
      upload.cancel()
    }
    process.once('SIGINT', stop)
    let summary: FolderUploadSummary
    try {
      summary = await upload.done
    } finally {
      process.off('SIGINT', stop)
      display.stop()
    }
    logger.info(`upload ${summary.state}`, { ...summary })
    context.print(summary, summaryText(summary))
    if (summary.state !== 'finished') {
      // The summary printed above is the one JSON document: it names each failed file.
      throw new CliError(
        summary.state === 'canceled'
          ? 'The upload was stopped; run the same command again to go on where it stopped.'
          : `${plural(summary.files.failed, 'file')} failed; see above. Run the same command again to retry them.`,
        EXIT.failed,
        summary.state === 'canceled' ? 'CANCELED' : 'UPLOAD_FAILED',
        true,
      )
    }
  } catch (error) {
    if (isUploadScanError(error)) {
      throw new CliError(error.message, EXIT.usage, error.code)
    }
    throw error
  } finally {
    dbs.close()
    logger.close()
  }
}

/** `--watch`: a pass per burst of changes, each told as it ends, until Ctrl-C or SIGTERM. */
async function watchUntilInterrupted(
  context: CommandContext,
  options: FolderUploadOptions,
  stopDisplay: () => void,
): Promise<void> {
  const watch = watchFolder({
    ...options,
    onPass: (summary) => {
      stopDisplay()
      context.print(summary, summaryText(summary))
    },
  })
  const stop = () => {
    void watch.stop()
  }
  process.once('SIGINT', stop)
  process.once('SIGTERM', stop)
  context.io.stderr(`Watching ${options.root}; Ctrl-C stops.\n`)
  try {
    await watch.done
  } finally {
    process.off('SIGINT', stop)
    process.off('SIGTERM', stop)
  }
}
