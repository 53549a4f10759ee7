import { execFileSync, spawn, spawnSync } from 'node:child_process'
import { createHash, randomBytes } from 'node:crypto'
import {
  appendFileSync,
  chmodSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  closeSync,
  renameSync,
  rmSync,
  statSync,
  symlinkSync,
  truncateSync,
  utimesSync,
  writeFileSync,
  writeSync,
} from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import Database from 'better-sqlite3'
import sharp from 'sharp'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  hashFile,
  isUploadScanError,
  scanFolder,
  sniffMedia,
  type ScanResult,
  type SkippedCounts,
  type ScanOptions,
  type UploadScanErrorCode,
  UploadScanError,
} from '../../src-main/uploads/scan'

const MiB = 1024 * 1024
const isRoot = process.getuid?.() === 0
/**
 * As root, the permission case scans in a child that keeps uid 0 but loses the capabilities that
 * let root ignore file modes (CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH): a mode of 000 then stops it,
 * while the checkout, owned by root, stays readable wherever it was cloned.
 */
const DROPPED_CAPS = '--bounding-set=-dac_override,-dac_read_search'
const setprivFound = isRoot && spawnSync('setpriv', ['--version']).error === undefined
const repoRoot = join(dirname(fileURLToPath(import.meta.url)), '..', '..')

/** The scan, in a child process run as the unprivileged user; prints its result or its error. */
const SCAN_IN_CHILD = `
import { isUploadScanError, scanFolder } from './src-main/uploads/scan'
const job = JSON.parse(process.env.ATELIER_SCAN_JOB ?? '{}')
try {
  console.log(JSON.stringify({ result: await scanFolder(job.root, job.options) }))
} catch (error) {
  if (!isUploadScanError(error)) throw error
  console.log(JSON.stringify({ error: { code: error.code, message: error.message } }))
}
`

/**
 * `scanFolder` as a process whom file modes bind: this one, or as root a child under setpriv
 * without CAP_DAC_OVERRIDE. The child's scan error comes back as the same UploadScanError.
 */
async function scanAsUser(root: string, options: ScanOptions = {}): Promise<ScanResult> {
  if (!isRoot) return scanFolder(root, options)
  const node = [process.execPath, '--import', 'tsx', '--input-type=module', '-e']
  const child = spawn('setpriv', [DROPPED_CAPS, ...node, SCAN_IN_CHILD], {
    cwd: repoRoot,
    env: { ...process.env, ATELIER_SCAN_JOB: JSON.stringify({ root, options }) },
  })
  let stdout = ''
  let stderr = ''
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()))
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()))
  const code = await new Promise<number | null>((resolve, reject) => {
    child.on('error', reject)
    child.on('close', resolve)
  })
  if (code !== 0) {
    throw new Error(
      `The scan without root's file-mode capabilities exited with ${String(code)}. stderr: ${stderr}`,
    )
  }
  const answer = JSON.parse(stdout) as
    { result: ScanResult } | { error: { code: UploadScanErrorCode; message: string } }
  if ('error' in answer) throw new UploadScanError(answer.error.code, answer.error.message, root)
  return answer.result
}

let base = ''
/** The main fixture tree: media, litter, links and a FIFO. */
let tree = ''
let fifoMade = false

const sha256Of = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex')

function write(path: string, bytes: string | Uint8Array): void {
  mkdirSync(dirname(path), { recursive: true })
  writeFileSync(path, bytes)
}

async function failure(
  promise: Promise<unknown>,
): Promise<{ code: UploadScanErrorCode; error: Error }> {
  try {
    await promise
  } catch (error) {
    if (isUploadScanError(error)) return { code: error.code, error }
    throw error
  }
  throw new Error('expected a failure, got a result')
}

const NO_SKIPS: SkippedCounts = {
  system: 0,
  hidden: 0,
  symlink: 0,
  specialFile: 0,
  excluded: 0,
  notIncluded: 0,
  notMedia: 0,
}

/** An ISO BMFF `ftyp` box (brand isom): the start of every MP4, not a playable clip. */
const MP4_HEADER = Buffer.concat([
  Buffer.from([0, 0, 0, 0x18]),
  Buffer.from('ftypisom', 'latin1'),
  Buffer.from([0, 0, 2, 0]),
  Buffer.from('isommp41', 'latin1'),
  Buffer.from([0, 0, 0, 8]),
  Buffer.from('free', 'latin1'),
])

/** An EBML header with DocType "webm" and an open Segment: how every WebM file starts. */
const WEBM_HEADER = Buffer.concat([
  Buffer.from([0x1a, 0x45, 0xdf, 0xa3, 0x8b]),
  Buffer.from([0x42, 0x86, 0x81, 0x01]),
  Buffer.from([0x42, 0x82, 0x84]),
  Buffer.from('webm', 'latin1'),
  Buffer.from([0x18, 0x53, 0x80, 0x67, 0x01, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff]),
])

const SVG =
  '<svg xmlns="http://www.w3.org/2000/svg" width="8" height="8"><rect width="8" height="8" fill="red"/></svg>\n'
const SVG_WITH_PROLOG = `<?xml version="1.0" encoding="UTF-8"?>\n<!-- drawn by hand -->\n${SVG}`

let png: Buffer
let jpeg: Buffer

beforeAll(async () => {
  base = mkdtempSync(join(tmpdir(), 'atelier-scan-'))
  tree = join(base, 'tree')
  const pixels = sharp({ create: { width: 8, height: 8, channels: 3, background: '#f00' } })
  png = await pixels.clone().png().toBuffer()
  jpeg = await pixels.clone().jpeg().toBuffer()
  const webp = await pixels.clone().webp().toBuffer()

  write(join(tree, 'a.png'), png)
  write(join(tree, 'b.JPG'), jpeg)
  write(join(tree, 'misnamed.png'), jpeg)
  write(join(tree, 'Zebra.png'), png)
  write(join(tree, 'nested/deep/c.webp'), webp)
  write(join(tree, 'raw/d.png'), png)
  write(join(tree, 'clip.mp4'), MP4_HEADER)
  write(join(tree, 'clip.webm'), WEBM_HEADER)
  write(join(tree, 'drawing.svg'), SVG_WITH_PROLOG)
  write(join(tree, 'notes.txt'), 'hello\n')
  write(join(tree, 'fake.png'), 'this is text, whatever the name says\n')
  write(join(tree, 'report.pdf'), '%PDF-1.4\n1 0 obj\n<<>>\nendobj\ntrailer\n<<>>\n%%EOF\n')
  write(join(tree, 'empty.png'), '')
  const db = new Database(join(tree, 'catalog.sqlite'))
  db.exec('CREATE TABLE t (x INTEGER); INSERT INTO t VALUES (1)')
  db.close()

  // Hidden and system entries, files and folders.
  write(join(tree, '.hidden.png'), png)
  write(join(tree, '.cache/x.png'), png)
  write(join(tree, '.DS_Store'), 'Bud1')
  write(join(tree, '._a.png'), 'AppleDouble')
  write(join(tree, 'Thumbs.db'), 'thumbs')
  write(join(tree, 'nested/desktop.ini'), '[.ShellClassInfo]')
  write(join(tree, 'Icon\r'), '')
  write(join(tree, '__MACOSX/a.png'), png)
  write(join(tree, '$RECYCLE.BIN/old.png'), png)

  // Links are never followed: to a file, dangling, and a loop back to the root.
  symlinkSync('a.png', join(tree, 'link.png'))
  symlinkSync('missing.png', join(tree, 'dangling.png'))
  symlinkSync('..', join(tree, 'nested/loop'))

  try {
    execFileSync('mkfifo', [join(tree, 'pipe')], { stdio: 'pipe' })
    fifoMade = true
  } catch (error) {
    console.info(`mkfifo is unavailable, FIFO cases are skipped: ${(error as Error).message}`)
  }
})

afterAll(() => {
  if (base) rmSync(base, { recursive: true, force: true })
})

const LISTED = [
  'Zebra.png',
  'a.png',
  'b.JPG',
  'catalog.sqlite',
  'clip.mp4',
  'clip.webm',
  'drawing.svg',
  'empty.png',
  'fake.png',
  'misnamed.png',
  'nested/deep/c.webp',
  'notes.txt',
  'raw/d.png',
  'report.pdf',
]

const paths = (result: ScanResult) => result.files.map((file) => file.relativePath)

describe('scanFolder', () => {
  it('lists regular files in code-unit order and counts every skipped entry by reason', async () => {
    const result = await scanFolder(tree)
    expect(result.root).toBe(tree)
    expect(paths(result)).toEqual(LISTED)
    expect(result.problems).toEqual([])
    expect(result.skipped).toEqual({
      ...NO_SKIPS,
      // .DS_Store, ._a.png, Thumbs.db, nested/desktop.ini, Icon\r, __MACOSX, $RECYCLE.BIN
      system: 7,
      // .hidden.png and the .cache folder (counted once, not walked)
      hidden: 2,
      // link.png, dangling.png, nested/loop
      symlink: 3,
      specialFile: fifoMade ? 1 : 0,
    })
    // Each one named with its reason, so that the person can see which files were not sent.
    expect(result.leftOut).toEqual(
      [
        { relativePath: '$RECYCLE.BIN', reason: 'system' },
        { relativePath: '.DS_Store', reason: 'system' },
        { relativePath: '._a.png', reason: 'system' },
        { relativePath: '.cache', reason: 'hidden' },
        { relativePath: '.hidden.png', reason: 'hidden' },
        { relativePath: 'Icon\r', reason: 'system' },
        { relativePath: 'Thumbs.db', reason: 'system' },
        { relativePath: '__MACOSX', reason: 'system' },
        { relativePath: 'dangling.png', reason: 'symlink' },
        { relativePath: 'link.png', reason: 'symlink' },
        { relativePath: 'nested/desktop.ini', reason: 'system' },
        { relativePath: 'nested/loop', reason: 'symlink' },
        ...(fifoMade ? [{ relativePath: 'pipe', reason: 'specialFile' }] : []),
      ].sort((a, b) => (a.relativePath < b.relativePath ? -1 : 1)),
    )
    for (const file of result.files) {
      const stats = statSync(join(tree, file.relativePath))
      expect(file).toEqual({
        relativePath: file.relativePath,
        sizeBytes: stats.size,
        mtimeMs: Math.floor(stats.mtimeMs),
        media: null,
      })
      expect(Number.isInteger(file.mtimeMs)).toBe(true)
    }
  })

  it('matches a pattern without a slash against names at any depth, ignoring case', async () => {
    const pngs = await scanFolder(tree, { include: ['*.png'] })
    expect(paths(pngs)).toEqual([
      'Zebra.png',
      'a.png',
      'empty.png',
      'fake.png',
      'misnamed.png',
      'raw/d.png',
    ])
    expect(pngs.skipped.notIncluded).toBe(LISTED.length - 6)

    const jpegs = await scanFolder(tree, { include: ['*.jpg', '*.webp'] })
    expect(paths(jpegs)).toEqual(['b.JPG', 'nested/deep/c.webp'])
  })

  it('matches a pattern with a slash against the whole relative path', async () => {
    expect(paths(await scanFolder(tree, { include: ['nested/**'] }))).toEqual([
      'nested/deep/c.webp',
    ])
    // Anchored at the root: "deep" is not a top-level folder.
    expect(paths(await scanFolder(tree, { include: ['deep/*.webp'] }))).toEqual([])
    expect(paths(await scanFolder(tree, { include: ['**/deep/*.webp'] }))).toEqual([
      'nested/deep/c.webp',
    ])
  })

  it('does not walk an excluded folder, and exclusion wins over inclusion', async () => {
    const withoutRaw = await scanFolder(tree, { exclude: ['RAW'] })
    expect(paths(withoutRaw)).toEqual(LISTED.filter((path) => path !== 'raw/d.png'))
    expect(withoutRaw.skipped.excluded).toBe(1)

    const nested = await scanFolder(tree, { exclude: ['nested/**'] })
    expect(paths(nested)).toEqual(LISTED.filter((path) => !path.startsWith('nested/')))
    // The folder is skipped as one entry: its desktop.ini and loop link are never seen.
    expect(nested.skipped).toMatchObject({ excluded: 1, system: 6, symlink: 2 })

    const both = await scanFolder(tree, { include: ['*.png'], exclude: ['a.png', 'raw'] })
    expect(paths(both)).toEqual(['Zebra.png', 'empty.png', 'fake.png', 'misnamed.png'])
    expect(both.skipped).toMatchObject({ excluded: 2, notIncluded: LISTED.length - 6 })
  })

  it('refuses an empty pattern with INVALID_PATTERN', async () => {
    const { code, error } = await failure(scanFolder(tree, { exclude: [''] }))
    expect(code).toBe('INVALID_PATTERN')
    expect(error.message).toMatch(/exclude pattern "" is not a usable glob/)
  })

  it('keeps only the media types asked for, by content, with their content types', async () => {
    const images = await scanFolder(tree, { mediaTypes: ['image'] })
    expect(images.files.map((file) => [file.relativePath, file.media?.contentType])).toEqual([
      ['Zebra.png', 'image/png'],
      ['a.png', 'image/png'],
      ['b.JPG', 'image/jpeg'],
      ['drawing.svg', 'image/svg+xml'],
      ['misnamed.png', 'image/jpeg'],
      ['nested/deep/c.webp', 'image/webp'],
      ['raw/d.png', 'image/png'],
    ])
    // catalog.sqlite, clip.mp4, clip.webm, empty.png, fake.png, notes.txt, report.pdf
    expect(images.skipped.notMedia).toBe(7)
    expect(images.problems).toEqual([])

    const media = await scanFolder(tree, { mediaTypes: ['image', 'video'] })
    expect(
      media.files.filter((file) => file.media?.mediaType === 'video').map((file) => file.media),
    ).toEqual([
      { contentType: 'video/mp4', mediaType: 'video' },
      { contentType: 'video/webm', mediaType: 'video' },
    ])
    expect(media.skipped.notMedia).toBe(5)
  })

  it('fails clearly when the folder is missing, is a file, or sits under a file', async () => {
    const missing = await failure(scanFolder(join(base, 'no-such-folder')))
    expect(missing.code).toBe('FOLDER_MISSING')
    expect(missing.error.message).toMatch(/There is no folder at .*no-such-folder\. Check the path/)

    const file = await failure(scanFolder(join(tree, 'a.png')))
    expect(file.code).toBe('NOT_A_FOLDER')
    expect(file.error.message).toMatch(/is a file, not a folder\. Pick the folder/)

    const under = await failure(scanFolder(join(tree, 'a.png', 'inside')))
    expect(under.code).toBe('NOT_A_FOLDER')
    expect((await failure(scanFolder(''))).code).toBe('FOLDER_MISSING')
  })

  it('follows the folder itself when it is a link: the person named it', async () => {
    const link = join(base, 'tree-link')
    symlinkSync(tree, link)
    expect(paths(await scanFolder(link))).toEqual(LISTED)
  })

  it('stops with ABORTED when the signal fires', async () => {
    const aborted = new AbortController()
    aborted.abort()
    expect((await failure(scanFolder(tree, { signal: aborted.signal }))).code).toBe('ABORTED')

    const during = new AbortController()
    const scan = scanFolder(tree, { signal: during.signal })
    during.abort()
    expect((await failure(scan)).code).toBe('ABORTED')
  })

  // Root reads whatever the mode says: as root, the scans run without the capabilities for that.
  it('reports a folder and a file it may not read, and goes on', async ({ skip }) => {
    if (isRoot && !setprivFound) {
      const reason =
        'setpriv (util-linux) was not found, so as root the scan cannot drop the capabilities that ignore file modes'
      if (process.env.CI) throw new Error(`${reason}. In CI this is an error: install util-linux.`)
      console.warn(`SKIPPED: ${reason}.`)
      skip(reason)
    }
    const root = join(base, 'locked')
    write(join(root, 'open.png'), png)
    write(join(root, 'secret/inside.png'), png)
    write(join(root, 'sealed.png'), png)
    chmodSync(join(root, 'secret'), 0o000)
    chmodSync(join(root, 'sealed.png'), 0o000)
    try {
      const listed = await scanAsUser(root)
      expect(paths(listed)).toEqual(['open.png', 'sealed.png'])
      expect(listed.problems).toEqual([
        {
          relativePath: 'secret',
          kind: 'folder',
          code: 'EACCES',
          message:
            'Could not read the folder "secret": permission denied. Give your user read access to it, or exclude it.',
        },
      ])
      // Listing needs no read right on a file; sniffing it does.
      const sniffed = await scanAsUser(root, { mediaTypes: ['image'] })
      expect(paths(sniffed)).toEqual(['open.png'])
      expect(sniffed.problems.map((p) => [p.relativePath, p.kind, p.code])).toEqual([
        ['sealed.png', 'file', 'EACCES'],
        ['secret', 'folder', 'EACCES'],
      ])
      chmodSync(root, 0o000)
      const locked = await failure(scanAsUser(root))
      expect(locked.code).toBe('FOLDER_UNREADABLE')
      expect(locked.error.message).toMatch(/permission denied\. Give your user read access/)
    } finally {
      chmodSync(root, 0o755)
      chmodSync(join(root, 'secret'), 0o755)
      chmodSync(join(root, 'sealed.png'), 0o644)
    }
  })

  /**
   * Paths longer than PATH_MAX fail for every user, root included: the one failure of a real
   * file system a test can arrange without privileges. The tree is built in two halves that are
   * each short enough to create, then the second is moved under the first.
   */
  describe('entries whose path is longer than the system allows', () => {
    const pathMax = process.platform === 'linux' ? 4096 : 1024
    let root = ''
    let moved = ''
    let parkedAt = ''
    let deepest = ''
    let deepestRelative = ''

    beforeAll(() => {
      if (process.platform !== 'linux' && process.platform !== 'darwin') return
      root = join(base, 'long')
      // The deepest folder's path ends 96 characters short of the limit: a short name in it
      // still fits, a 200-character one does not.
      const target = pathMax - 96
      const names: string[] = []
      let length = root.length
      while (target - length > 250) {
        names.push('d'.repeat(200))
        length += 201
      }
      names.push('e'.repeat(target - length - 1))
      const half = Math.ceil(names.length / 2)
      const upper = join(root, ...names.slice(0, half))
      const parked = join(root, 'parked')
      const lower = join(parked, ...names.slice(half))
      mkdirSync(upper, { recursive: true })
      mkdirSync(lower, { recursive: true })
      writeFileSync(join(lower, 'ok.png'), png)
      writeFileSync(join(lower, `${'f'.repeat(200)}.png`), png)
      mkdirSync(join(lower, 's'.repeat(200)))
      writeFileSync(join(lower, 's'.repeat(200), 'x.png'), png)
      parkedAt = join(parked, names[half] ?? '')
      moved = join(upper, names[half] ?? '')
      renameSync(parkedAt, moved)
      deepest = join(root, ...names)
      deepestRelative = names.join('/')
      expect(deepest.length).toBe(target)
    })

    afterAll(() => {
      // Moved back up, so the tree can be removed with ordinary (PATH_MAX-bound) calls.
      if (moved) renameSync(moved, parkedAt)
    })

    it('reports them as problems and lists their reachable neighbours', async ({ skip }) => {
      if (!root) skip(`PATH_MAX is not known for ${process.platform}`)
      const result = await scanFolder(root)
      expect(paths(result)).toEqual([`${deepestRelative}/ok.png`])
      expect(result.problems.map((p) => [p.relativePath, p.kind, p.code])).toEqual([
        [`${deepestRelative}/${'f'.repeat(200)}.png`, 'file', 'ENAMETOOLONG'],
        [`${deepestRelative}/${'s'.repeat(200)}`, 'folder', 'ENAMETOOLONG'],
      ])
      expect(result.problems[1]?.message).toMatch(
        /^Could not read the folder ".*": its path is longer than the system allows\. Move it closer to the top/,
      )
      const hash = await failure(hashFile(join(deepest, `${'f'.repeat(200)}.png`)))
      expect(hash.code).toBe('FILE_UNREADABLE')
      const folder = await failure(scanFolder(join(deepest, 's'.repeat(200))))
      expect(folder.code).toBe('FOLDER_UNREADABLE')
      expect(folder.error.message).toMatch(/its path is longer than the system allows/)
    })
  })

  it('lists a folder of 10,000 files correctly', async () => {
    const root = join(base, 'many')
    const expected: { relativePath: string; sizeBytes: number }[] = []
    for (let folder = 0; folder < 100; folder++) {
      const dir = join(root, `f${String(folder).padStart(3, '0')}`)
      mkdirSync(dir, { recursive: true })
      for (let file = 0; file < 100; file++) {
        const name = `${String(file).padStart(3, '0')}.bin`
        const bytes = 'x'.repeat((folder * 100 + file) % 7)
        writeFileSync(join(dir, name), bytes)
        expected.push({
          relativePath: `f${String(folder).padStart(3, '0')}/${name}`,
          sizeBytes: bytes.length,
        })
      }
    }
    const started = Date.now()
    const result = await scanFolder(root)
    const elapsedMs = Date.now() - started
    expect(
      result.files.map(({ relativePath, sizeBytes }) => ({ relativePath, sizeBytes })),
    ).toEqual(expected)
    expect(result.problems).toEqual([])
    expect(result.skipped).toEqual(NO_SKIPS)
    // Generous for a loaded machine; a walk gone quadratic would blow well past it.
    expect(elapsedMs).toBeLessThan(8_000)
  })
})

describe('sniffMedia', () => {
  it('tells images and videos by content, whatever the name says', async () => {
    expect(await sniffMedia(join(tree, 'a.png'))).toEqual({
      contentType: 'image/png',
      mediaType: 'image',
    })
    expect(await sniffMedia(join(tree, 'misnamed.png'))).toEqual({
      contentType: 'image/jpeg',
      mediaType: 'image',
    })
    expect(await sniffMedia(join(tree, 'clip.webm'))).toEqual({
      contentType: 'video/webm',
      mediaType: 'video',
    })
  })

  it('says null for what is not media: text, PDF, a database, an empty file', async () => {
    for (const name of ['fake.png', 'notes.txt', 'report.pdf', 'catalog.sqlite', 'empty.png']) {
      expect(await sniffMedia(join(tree, name)), name).toBeNull()
    }
  })

  it('takes SVG only from a .svg file whose text opens like an SVG document', async () => {
    const dir = join(base, 'svg')
    write(join(dir, 'plain.svg'), SVG)
    write(join(dir, 'prolog.SVG'), SVG_WITH_PROLOG)
    write(join(dir, 'drawing.txt'), SVG)
    write(join(dir, 'page.svg'), '<!DOCTYPE html><html><body>not a drawing</body></html>')
    write(join(dir, 'data.svg'), '<?xml version="1.0"?><data/>')
    const svg = { contentType: 'image/svg+xml', mediaType: 'image' }
    expect(await sniffMedia(join(dir, 'plain.svg'))).toEqual(svg)
    expect(await sniffMedia(join(dir, 'prolog.SVG'))).toEqual(svg)
    expect(await sniffMedia(join(dir, 'drawing.txt'))).toBeNull()
    expect(await sniffMedia(join(dir, 'page.svg'))).toBeNull()
    expect(await sniffMedia(join(dir, 'data.svg'))).toBeNull()
  })

  it('fails with FILE_MISSING or NOT_A_FILE, without blocking on a FIFO', async ({ skip }) => {
    expect((await failure(sniffMedia(join(tree, 'gone.png')))).code).toBe('FILE_MISSING')
    expect((await failure(sniffMedia(join(tree, 'raw')))).code).toBe('NOT_A_FILE')
    if (!fifoMade) skip('mkfifo is unavailable')
    const fifo = await failure(sniffMedia(join(tree, 'pipe')))
    expect(fifo.code).toBe('NOT_A_FILE')
    expect(fifo.error.message).toMatch(/is a FIFO \(named pipe\), not a regular file/)
  })
})

describe('hashFile', () => {
  let dir = ''
  beforeAll(() => {
    dir = join(base, 'hash')
    mkdirSync(dir)
  })

  async function hashed(bytes: Uint8Array, name: string) {
    const path = join(dir, name)
    writeFileSync(path, bytes)
    const chunks: number[] = []
    const result = await hashFile(path, { onBytes: (n) => chunks.push(n) })
    return { path, result, chunks }
  }

  it('hashes an empty file', async () => {
    const { path, result, chunks } = await hashed(new Uint8Array(0), 'empty')
    expect(result).toEqual({
      sha256: sha256Of(new Uint8Array(0)),
      sizeBytes: 0,
      mtimeMs: Math.floor(statSync(path).mtimeMs),
    })
    expect(chunks.reduce((a, b) => a + b, 0)).toBe(0)
  })

  it('hashes a small file', async () => {
    const bytes = Buffer.from('hello, atelier\n')
    const { result, chunks } = await hashed(bytes, 'small')
    expect(result.sha256).toBe(sha256Of(bytes))
    expect(result.sizeBytes).toBe(bytes.length)
    expect(chunks).toEqual([bytes.length])
  })

  it('streams a 20 MiB file in chunks of at most 1 MiB', async () => {
    const bytes = randomBytes(20 * MiB)
    const { path, result, chunks } = await hashed(bytes, 'large')
    expect(result).toEqual({
      sha256: sha256Of(bytes),
      sizeBytes: 20 * MiB,
      mtimeMs: Math.floor(statSync(path).mtimeMs),
    })
    expect(chunks.reduce((a, b) => a + b, 0)).toBe(20 * MiB)
    expect(Math.max(...chunks)).toBeLessThanOrEqual(MiB)
    expect(chunks.length).toBeGreaterThanOrEqual(20)
  })

  it('gives back the bytes of a file no larger than asked, read in the same chunks', async () => {
    const bytes = randomBytes(2 * MiB + 300)
    const { path, result } = await hashed(bytes, 'kept')
    const chunks: number[] = []
    const kept = await hashFile(path, {
      keepBytesUpTo: bytes.length,
      onBytes: (n) => chunks.push(n),
    })
    expect(kept).toEqual({ ...result, bytes })
    expect(chunks).toEqual([MiB, MiB, 300])

    // One byte over: streamed as usual, nothing kept.
    expect(await hashFile(path, { keepBytesUpTo: bytes.length - 1 })).toEqual(result)
  })

  async function changedWhileHashed(change: (path: string) => void): Promise<Error> {
    const path = join(dir, `changing-${randomBytes(4).toString('hex')}`)
    writeFileSync(path, randomBytes(4 * MiB))
    let first = true
    const { code, error } = await failure(
      hashFile(path, {
        onBytes: () => {
          if (first) change(path)
          first = false
        },
      }),
    )
    expect(code).toBe('FILE_CHANGED')
    return error
  }

  it('fails with FILE_CHANGED when the file is appended to while hashed', async () => {
    const error = await changedWhileHashed((path) => {
      appendFileSync(path, 'more bytes')
    })
    expect(error.message).toMatch(
      /changed while it was being hashed \(4194304 bytes before, 4194314 after\)/,
    )
  })

  it('fails with FILE_CHANGED when the file is truncated while hashed', async () => {
    await changedWhileHashed((path) => {
      truncateSync(path, MiB)
    })
  })

  it('fails with FILE_CHANGED when bytes are rewritten in place while hashed', async () => {
    const error = await changedWhileHashed((path) => {
      const fd = openSync(path, 'r+')
      writeSync(fd, Buffer.from('rewritten'), 0, 9, 3 * MiB)
      closeSync(fd)
      // Set explicitly: the write alone may land within the same mtime tick on coarse clocks.
      utimesSync(path, new Date(), new Date(Date.now() + 5_000))
    })
    expect(error.message).toMatch(/\(it was modified\)/)
  })

  it('fails with FILE_CHANGED when another file is renamed over it while hashed', async () => {
    const error = await changedWhileHashed((path) => {
      writeFileSync(`${path}.new`, randomBytes(4 * MiB))
      renameSync(`${path}.new`, path)
    })
    expect(error.message).toMatch(/it was replaced by another file/)
  })

  it('stops with ABORTED when the signal fires, before or during the read', async () => {
    const path = join(dir, 'abortable')
    writeFileSync(path, randomBytes(8 * MiB))
    const before = new AbortController()
    before.abort()
    let read = 0
    const early = await failure(
      hashFile(path, { signal: before.signal, onBytes: (n) => (read += n) }),
    )
    expect(early.code).toBe('ABORTED')
    expect(read).toBe(0)

    const during = new AbortController()
    const late = await failure(
      hashFile(path, {
        signal: during.signal,
        onBytes: (n) => {
          read += n
          during.abort()
        },
      }),
    )
    expect(late.code).toBe('ABORTED')
    expect(read).toBeLessThan(8 * MiB)
  })

  it('fails with FILE_MISSING or NOT_A_FILE, without blocking on a FIFO', async ({ skip }) => {
    expect((await failure(hashFile(join(dir, 'gone')))).code).toBe('FILE_MISSING')
    expect((await failure(hashFile(dir))).code).toBe('NOT_A_FILE')
    if (!fifoMade) skip('mkfifo is unavailable')
    expect((await failure(hashFile(join(tree, 'pipe')))).code).toBe('NOT_A_FILE')
  })
})
