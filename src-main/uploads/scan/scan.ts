import {
  type Dirent,
  readdir,
  readdirSync,
  realpath,
  realpathSync,
  stat as statCallback,
  statSync,
} from 'node:fs'
import { lstat, stat } from 'node:fs/promises'
import { isAbsolute, join, relative, resolve, sep } from 'node:path'
import { fdir, type FSLike } from 'fdir'
import type { ListedFile } from '../../db/repositories/uploads'
import {
  abortedError,
  explainSystemCode,
  folderError,
  isUploadScanError,
  systemCodeOf,
  UploadScanError,
} from './errors'
import { eachLimited } from './limit'
import { type SniffedMedia, type SniffedMediaType, sniffFile } from './media'
import { skipReasonOfName } from './names'
import { pathPatterns, type PathPatterns } from './patterns'

export interface ScanOptions {
  /**
   * Globs a file must match (any of them) to be listed; all files when absent or empty. A
   * pattern without a slash matches the name at any depth (`*.png`, `IMG_*`); one with a slash
   * matches the whole path from the folder (`2024/**`, `raw/*.jpg`). Matching ignores case. Folders are always walked, whatever the include patterns.
   */
  include?: readonly string[]
  /**
   * Globs, same rules, for files and folders to leave out; an excluded folder is not walked.
   * Exclusion wins over inclusion.
   */
  exclude?: readonly string[]
  /**
   * Keep only files whose content is one of these media types (sniffed from their first bytes,
   * see `sniffMedia`); each listed file then carries its content type. Without it, nothing is
   * read and every regular file is listed.
   */
  mediaTypes?: readonly SniffedMediaType[]
  /**
   * List these files ('/'-separated paths inside the folder) instead of walking the folder: the
   * files a person dropped, without reading the rest of the folder they sit in. The same rules
   * apply to each as to a walked file (names, links, patterns, media); one that is missing, is a
   * folder or would lie outside the folder becomes a problem.
   */
  only?: readonly string[]
  signal?: AbortSignal
}

export interface ScannedFile extends ListedFile {
  /** What its bytes are, when the scan was asked for `mediaTypes`; null otherwise. */
  media: SniffedMedia | null
}

/**
 * Why entries were left out. An entry is counted once, under the first reason in this order;
 * a skipped folder counts as one, its contents are not looked at.
 */
export interface SkippedCounts {
  /** OS and archiver litter: .DS_Store, ._* AppleDouble, Thumbs.db, desktop.ini, Icon\r... */
  system: number
  /** Other names starting with a dot. */
  hidden: number
  /** Symbolic links (and Windows junctions), to files or folders, dangling or not. */
  symlink: number
  /** FIFOs, sockets and devices: not files that hold media, and opening a FIFO blocks. */
  specialFile: number
  /** Matched an exclude pattern. */
  excluded: number
  /** Matched no include pattern. */
  notIncluded: number
  /** With `mediaTypes`: the content is not one of them (text, PDF, a video when images only). */
  notMedia: number
}

/** A file or folder that could not be read; the scan went on without it. */
export interface ScanProblem {
  relativePath: string
  kind: 'file' | 'folder'
  /**
   * The system's error code (EACCES, ENOENT, ENAMETOOLONG...), NOT_A_FILE, or NOT_IN_FOLDER (a
   * named file whose path would lead out of the folder).
   */
  code: string
  message: string
}

/** An entry the scan left out, and why (a key of `SkippedCounts`). */
export interface LeftOutEntry {
  relativePath: string
  reason: keyof SkippedCounts
}

/** At most this many left-out entries are named; the counts go on past it. */
export const LEFT_OUT_NAMED_MAX = 1000

export interface ScanResult {
  /** The folder scanned, as an absolute path. */
  root: string
  /** Regular files, sorted by relative path ('/' separators, ordered by code unit). */
  files: ScannedFile[]
  skipped: SkippedCounts
  /**
   * The entries counted in `skipped`, named (the first LEFT_OUT_NAMED_MAX, sorted by path): a
   * count alone leaves the person guessing which files were not sent.
   */
  leftOut: LeftOutEntry[]
  /** Sorted by relative path. */
  problems: ScanProblem[]
}

const STAT_CONCURRENCY = 16
const SNIFF_CONCURRENCY = 8

function problem(relativePath: string, kind: 'file' | 'folder', error: unknown): ScanProblem {
  if (isUploadScanError(error)) {
    return { relativePath, kind, code: error.code, message: error.message }
  }
  const code = systemCodeOf(error)
  const { reason, advice } = explainSystemCode(code)
  const what = kind === 'folder' ? `the folder "${relativePath}"` : `"${relativePath}"`
  return {
    relativePath,
    kind,
    code: code ?? 'UNKNOWN',
    message: `Could not read ${what}: ${reason}. ${advice}`,
  }
}

function byPath(a: { relativePath: string }, b: { relativePath: string }): number {
  // Code-unit order: the same on every machine, unlike localeCompare.
  return a.relativePath < b.relativePath ? -1 : a.relativePath > b.relativePath ? 1 : 0
}

function toSlashes(path: string): string {
  return sep === '/' ? path : path.split(sep).join('/')
}

/** What the scan leaves out: counted by reason, and named up to LEFT_OUT_NAMED_MAX. */
class LeftOut {
  readonly counts: SkippedCounts = {
    system: 0,
    hidden: 0,
    symlink: 0,
    specialFile: 0,
    excluded: 0,
    notIncluded: 0,
    notMedia: 0,
  }
  readonly entries: LeftOutEntry[] = []

  add(reason: keyof SkippedCounts, relativePath: string): void {
    this.counts[reason]++
    if (this.entries.length < LEFT_OUT_NAMED_MAX) this.entries.push({ relativePath, reason })
  }
}

/** Which entries of a listed folder the walk keeps; counts the others. */
function entryFilter(patterns: PathPatterns, skipped: LeftOut) {
  return (folder: string, entry: Dirent): boolean => {
    const relativePath = folder === '' ? entry.name : `${folder}/${entry.name}`
    const byName = skipReasonOfName(entry.name)
    if (byName) {
      skipped.add(byName, relativePath)
      return false
    }
    // Links are never followed: one can point outside the folder (uploading what the person
    // did not pick) or back up into it (a loop, or the same files twice).
    if (entry.isSymbolicLink()) {
      skipped.add('symlink', relativePath)
      return false
    }
    if (entry.isDirectory() || entry.isFile()) {
      if (patterns.excludes(relativePath)) {
        skipped.add('excluded', relativePath)
        return false
      }
      if (entry.isFile() && !patterns.includes(relativePath)) {
        skipped.add('notIncluded', relativePath)
        return false
      }
      return true
    }
    skipped.add('specialFile', relativePath)
    return false
  }
}

/**
 * Lists the regular files under a folder, without reading them (unless `mediaTypes` asks for
 * sniffing). Hidden and system entries, symbolic links and special files are skipped and
 * counted; a folder or file that cannot be read becomes a problem and the scan goes on. The
 * folder itself is followed if it is a link: the person named it.
 *
 * Throws UploadScanError: FOLDER_MISSING, NOT_A_FOLDER, FOLDER_UNREADABLE, INVALID_PATTERN,
 * ABORTED.
 */
export async function scanFolder(root: string, options: ScanOptions = {}): Promise<ScanResult> {
  const { signal } = options
  const patterns = pathPatterns(options.include, options.exclude)
  if (root === '') {
    throw new UploadScanError('FOLDER_MISSING', 'No folder was given. Name the folder to upload.')
  }
  const rootPath = resolve(root)
  let rootStats
  try {
    rootStats = await stat(rootPath)
  } catch (error) {
    throw folderError(rootPath, error)
  }
  if (!rootStats.isDirectory()) {
    throw new UploadScanError(
      'NOT_A_FOLDER',
      `${rootPath} is a file, not a folder. Pick the folder that holds the files to upload.`,
      rootPath,
    )
  }
  if (signal?.aborted) throw abortedError(signal, 'scan')

  const skipped = new LeftOut()
  const problems: ScanProblem[] = []
  const paths = options.only
    ? named(rootPath, options.only, patterns, skipped, problems)
    : await walk(rootPath, patterns, skipped, problems, signal)
  if (signal?.aborted) throw abortedError(signal, 'scan')
  // The default sort compares UTF-16 code units: the same order on every machine and locale.
  paths.sort()

  // A file can change between the listing and its stat: it is taken as the stat shows it.
  const listed = new Array<ScannedFile | null>(paths.length).fill(null)
  await eachLimited(paths, STAT_CONCURRENCY, signal, async (relativePath, index) => {
    try {
      const stats = await lstat(join(rootPath, relativePath))
      if (stats.isSymbolicLink()) skipped.add('symlink', relativePath)
      else if (options.only && (await throughLink(rootPath, relativePath))) {
        skipped.add('symlink', relativePath)
      }
      // Only a named path can be a folder here: the walk lists files.
      else if (stats.isDirectory()) problems.push(notAFile(relativePath))
      else if (!stats.isFile()) skipped.add('specialFile', relativePath)
      else {
        listed[index] = {
          relativePath,
          sizeBytes: stats.size,
          mtimeMs: Math.floor(stats.mtimeMs),
          media: null,
        }
      }
    } catch (error) {
      problems.push(problem(relativePath, 'file', error))
    }
  })
  if (signal?.aborted) throw abortedError(signal, 'scan')
  let files = listed.filter((file) => file !== null)

  const wanted = options.mediaTypes
  if (wanted) {
    await eachLimited(files, SNIFF_CONCURRENCY, signal, async (file) => {
      try {
        const media = await sniffFile(join(rootPath, file.relativePath), file.sizeBytes)
        if (media && wanted.includes(media.mediaType)) file.media = media
        else skipped.add('notMedia', file.relativePath)
      } catch (error) {
        problems.push(problem(file.relativePath, 'file', error))
      }
    })
    if (signal?.aborted) throw abortedError(signal, 'scan')
    files = files.filter((file) => file.media !== null)
  }
  return {
    root: rootPath,
    files,
    skipped: skipped.counts,
    leftOut: skipped.entries.sort(byPath),
    problems: problems.sort(byPath),
  }
}

/**
 * Whether a named file's path goes through a linked folder inside the root, which a walk would
 * not have entered (see `entryFilter`).
 */
async function throughLink(rootPath: string, relativePath: string): Promise<boolean> {
  const segments = relativePath.split('/').slice(0, -1)
  for (let depth = 1; depth <= segments.length; depth++) {
    if ((await lstat(join(rootPath, ...segments.slice(0, depth)))).isSymbolicLink()) return true
  }
  return false
}

function notAFile(relativePath: string): ScanProblem {
  return {
    relativePath,
    kind: 'file',
    code: 'NOT_A_FILE',
    message: `"${relativePath}" is a folder, not a file. Upload the folder itself instead.`,
  }
}

/**
 * The named files (see `ScanOptions.only`) that pass the rules a walk applies to names and
 * patterns, each once; the others are counted, or are problems when they are not in the folder.
 */
function named(
  rootPath: string,
  only: readonly string[],
  patterns: PathPatterns,
  skipped: LeftOut,
  problems: ScanProblem[],
): string[] {
  const kept: string[] = []
  for (const relativePath of new Set(only)) {
    const segments = relativePath.split('/')
    // Resolved again, not trusted: on Windows a backslash inside a segment is a separator too.
    const inside = relative(rootPath, resolve(rootPath, ...segments))
    if (
      segments.some((segment) => segment === '' || segment === '.' || segment === '..') ||
      inside === '' ||
      isAbsolute(inside) ||
      inside.split(sep)[0] === '..'
    ) {
      problems.push({
        relativePath,
        kind: 'file',
        code: 'NOT_IN_FOLDER',
        message: `"${relativePath}" is not a file inside ${rootPath}. Name files by their path inside the folder.`,
      })
      continue
    }
    // As a walk would: a hidden or excluded folder on the way leaves the file out too.
    const byName = segments.map(skipReasonOfName).find((reason) => reason !== null)
    const prefixes = segments.map((_, depth) => segments.slice(0, depth + 1).join('/'))
    if (byName) skipped.add(byName, relativePath)
    else if (prefixes.some((prefix) => patterns.excludes(prefix))) {
      skipped.add('excluded', relativePath)
    } else if (!patterns.includes(relativePath)) skipped.add('notIncluded', relativePath)
    else kept.push(relativePath)
  }
  return kept
}

/** Every file under the folder that the rules keep, as '/'-separated paths inside it. */
async function walk(
  rootPath: string,
  patterns: PathPatterns,
  skipped: LeftOut,
  problems: ScanProblem[],
  signal: AbortSignal | undefined,
): Promise<string[]> {
  let rootFailure: unknown = null
  const keep = entryFilter(patterns, skipped)
  // fdir drops unreadable folders and special files silently; its listing call is where both
  // can be seen, so the walk lists through this one and fdir only recurses and joins paths.
  const listFolder = (
    path: string,
    readOptions: { withFileTypes: true },
    callback: (error: NodeJS.ErrnoException | null, entries: Dirent[]) => void,
  ): void => {
    const folder = toSlashes(relative(rootPath, path))
    readdir(path, readOptions, (error, entries) => {
      if (error) {
        if (folder === '') rootFailure = error
        else problems.push(problem(folder, 'folder', error))
        callback(null, [])
        return
      }
      callback(
        null,
        entries.filter((entry) => keep(folder, entry)),
      )
    })
  }
  const fs: FSLike = {
    readdir: listFolder as unknown as FSLike['readdir'],
    readdirSync,
    realpath,
    realpathSync,
    stat: statCallback,
    statSync,
  }
  const crawler = new fdir({ relativePaths: true, pathSeparator: '/', signal, fs })
  const paths = await crawler.crawl(rootPath).withPromise()
  if (rootFailure !== null) throw folderError(rootPath, rootFailure)
  return paths
}
