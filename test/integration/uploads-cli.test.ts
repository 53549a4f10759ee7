import { spawn } from 'node:child_process'
import { createHash, randomBytes } from 'node:crypto'
import { mkdirSync, mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs'
import { createServer, request } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import sharp from 'sharp'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Asset, AssetFolder } from '../../src-shared/api'
import { createServiceClient, type ServiceClient } from '../../src-main/service'
import type { FolderUploadSummary } from '../../src-main/uploads'
import type { SkippedCounts } from '../../src-main/uploads/scan'
import { DEFAULT_TRANSFER_RETRY } from '../../src-main/uploads/transfer'
import { runAtelier, type CliRun } from '../helpers/cli'
import { secretServiceAvailability, startSecretService } from '../helpers/keyring'
import { startTestSandbox, type TestSandbox } from '../helpers/sandbox'

const MiB = 1024 * 1024
/** The sandbox's part size for a new upload. */
const PART = 8 * MiB
const PATH_MAX = 4096
const repoRoot = join(dirname(fileURLToPath(import.meta.url)), '..', '..')

const keychain = secretServiceAvailability()

const sha256 = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex')
const sum = (values: readonly number[]) => values.reduce((a, b) => a + b, 0)

/** A small real PNG, different for each `seed`. */
async function png(seed: number): Promise<Buffer> {
  const background = { r: (seed * 37) % 256, g: (seed * 91) % 256, b: (seed * 53) % 256 }
  return sharp({ create: { width: 16, height: 16, channels: 3, background } })
    .png()
    .toBuffer()
}

/** The `ftyp` box every MP4 opens with (brand isom). */
const MP4_FTYP = Buffer.concat([
  Buffer.from([0, 0, 0, 0x18]),
  Buffer.from('ftypisom', 'latin1'),
  Buffer.from([0, 0, 2, 0]),
  Buffer.from('isommp41', 'latin1'),
])

/** An MP4 as far as any sniffer can tell: `ftyp`, then one `mdat` box of random bytes. */
function randomVideo(size: number): Buffer {
  const bytes = randomBytes(size)
  MP4_FTYP.copy(bytes, 0)
  bytes.writeUInt32BE(size - MP4_FTYP.length, MP4_FTYP.length)
  bytes.write('mdat', MP4_FTYP.length + 4, 'latin1')
  return bytes
}

/** Seeded, so that a failing kill schedule can be replayed. */
function mulberry32(seed: number): () => number {
  let state = seed >>> 0
  return () => {
    state = (state + 0x6d2b79f5) >>> 0
    let t = state
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

/**
 * A file nobody can read, root included: its path is longer than PATH_MAX. It is written while
 * the top folder of its chain has a one-letter name, which is then made 200 letters long;
 * `shorten` renames it back, so the tree can be removed with ordinary calls.
 */
function unreadableFile(
  parent: string,
  bytes: Buffer,
): { relativePath: string; shorten: () => void } {
  const chain = join(parent, 'long')
  const longTop = 'd'.repeat(200)
  // The deepest folder ends 96 characters short of the limit: listing it works, but a file
  // with a 200-character name in it does not fit.
  const target = PATH_MAX - 96
  const names = [longTop]
  let length = chain.length + 1 + longTop.length
  while (target - length > 250) {
    names.push('d'.repeat(200))
    length += 201
  }
  names.push('e'.repeat(target - length - 1))
  const short = ['x', ...names.slice(1)]
  const fileName = `${'f'.repeat(200)}.png`
  mkdirSync(join(chain, ...short), { recursive: true })
  writeFileSync(join(chain, ...short, fileName), bytes)
  renameSync(join(chain, 'x'), join(chain, longTop))
  return {
    relativePath: ['long', ...names, fileName].join('/'),
    shorten: () => {
      renameSync(join(chain, longTop), join(chain, 'x'))
    },
  }
}

/** One PUT of a part's bytes to storage, as the proxy saw it. */
interface StoragePut {
  path: string
  /** Body bytes that reached the proxy. */
  bytes: number
  /** Storage's answer; null when the PUT was cut before one came. */
  status: number | null
}

interface CountingProxy {
  url: string
  /** Every storage PUT, in the order they started. */
  puts: StoragePut[]
  /** Told after each chunk of a storage PUT arrives. */
  onBytes: (() => void) | null
  /** The storage PUTs under way right now. */
  open: () => StoragePut[]
  /** Settles once no storage PUT is under way. */
  idle: () => Promise<void>
  close: () => Promise<void>
}

/**
 * An HTTP proxy in front of the sandbox that counts the body bytes of every storage PUT as they
 * arrive. A client that dies mid-request cuts the request to storage too, as the dropped
 * connection of a real client would.
 */
async function startCountingProxy(target: string): Promise<CountingProxy> {
  const open = new Set<StoragePut>()
  let waiting: (() => void)[] = []
  const puts: StoragePut[] = []
  const counting: Pick<CountingProxy, 'onBytes'> = { onBytes: null }
  const server = createServer((incoming, outgoing) => {
    const path = incoming.url ?? '/'
    const put: StoragePut | null =
      incoming.method === 'PUT' && path.startsWith('/_storage/')
        ? { path, bytes: 0, status: null }
        : null
    if (put) {
      puts.push(put)
      open.add(put)
      outgoing.on('close', () => {
        open.delete(put)
        if (open.size > 0) return
        const done = waiting
        waiting = []
        for (const resolve of done) resolve()
      })
    }
    const upstream = request(
      new URL(path, target),
      { method: incoming.method, headers: incoming.headers },
      (answer) => {
        if (put) put.status = answer.statusCode ?? null
        if (outgoing.destroyed) {
          answer.resume()
          return
        }
        outgoing.writeHead(answer.statusCode ?? 502, answer.headers)
        answer.pipe(outgoing)
      },
    )
    upstream.on('error', () => outgoing.destroy())
    incoming.on('data', (chunk: Buffer) => {
      if (!put) return
      put.bytes += chunk.length
      counting.onBytes?.()
    })
    incoming.on('close', () => {
      if (!incoming.complete) upstream.destroy()
    })
    incoming.pipe(upstream)
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return Object.assign(counting, {
    url: `http://127.0.0.1:${port}`,
    puts,
    open: () => [...open],
    idle: () =>
      open.size === 0
        ? Promise.resolve()
        : new Promise<void>((resolve) => {
            waiting.push(() => {
              resolve()
            })
          }),
    close: async () => {
      server.closeAllConnections()
      await new Promise((resolve) => server.close(resolve))
    },
  })
}

async function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      reject(new Error(`Timed out after ${ms} ms waiting for ${what}.`))
    }, ms)
  })
  try {
    return await Promise.race([promise, timeout])
  } finally {
    clearTimeout(timer)
  }
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

describe.skipIf(!keychain.available)('atelier upload, end to end', { timeout: 90_000 }, () => {
  let keyring: Awaited<ReturnType<typeof startSecretService>> | undefined
  let sandbox: TestSandbox | undefined
  let proxy: CountingProxy | undefined
  let client: ServiceClient
  let scratch = ''
  let home = ''
  const cleanups: (() => void)[] = []

  const started = () => {
    if (!keyring || !sandbox || !proxy) throw new Error('beforeAll did not finish')
    return { keyring, sandbox, proxy }
  }

  const atelier = (args: string[], input = ''): Promise<CliRun> =>
    runAtelier(['--home', home, ...args], { env: started().keyring.env, input })

  /** Storage PUTs made while `run` ran. */
  async function putsDuring<T>(run: () => Promise<T>): Promise<{ result: T; puts: StoragePut[] }> {
    const { puts } = started().proxy
    const before = puts.length
    const result = await run()
    await within(started().proxy.idle(), 10_000, 'storage PUTs to settle')
    return { result, puts: puts.slice(before) }
  }

  async function assets(): Promise<Asset[]> {
    const all: Asset[] = []
    for await (const asset of client.list('/v1/assets', { params: { query: { limit: 500 } } })) {
      all.push(asset)
    }
    return all
  }

  async function folders(): Promise<AssetFolder[]> {
    const all: AssetFolder[] = []
    const pages = client.list('/v1/asset-folders', { params: { query: { limit: 500 } } })
    for await (const folder of pages) all.push(folder)
    return all
  }

  async function folderIdAt(path: string): Promise<string> {
    const found = (await folders()).find((folder) => folder.path === path)
    if (!found) throw new Error(`no asset folder at ${path}`)
    return found.id
  }

  beforeAll(async () => {
    keyring = await startSecretService()
    sandbox = await startTestSandbox({ latencyMs: 0 })
    proxy = await startCountingProxy(sandbox.url)
    // Storage is reached through the counting proxy, as real storage sits behind a CDN or a load
    // balancer: the sandbox signs part and download URLs with the address it is told is public.
    sandbox.services.config.baseUrl = proxy.url
    client = createServiceClient({ baseUrl: sandbox.url, apiKey: sandbox.keys.admin })
    scratch = mkdtempSync(join(tmpdir(), 'atelier-upload-cli-'))
    home = join(scratch, 'home')
    const added = await atelier(
      ['profile', 'add', 'work', '--base-url', sandbox.url],
      sandbox.keys.admin,
    )
    expect(added.code, added.stderr).toBe(0)
  }, 60_000)

  afterAll(async () => {
    for (const cleanup of cleanups) cleanup()
    await proxy?.close()
    await sandbox?.close()
    await keyring?.close()
    if (scratch) rmSync(scratch, { recursive: true, force: true })
  })

  it('uploads a nested folder once, tells duplicates, litter and unreadable files apart, and sends nothing the second time', async () => {
    const root = join(scratch, 'shoot')
    mkdirSync(join(root, 'day 1', 'raw'), { recursive: true })
    mkdirSync(join(root, 'day 2'), { recursive: true })
    const [a, b, c, hidden] = await Promise.all([png(1), png(2), png(3), png(4)])
    writeFileSync(join(root, 'cover.png'), a)
    writeFileSync(join(root, 'day 1', 'a.png'), b)
    // The same bytes twice, in two folders.
    writeFileSync(join(root, 'day 1', 'raw', 'b.png'), c)
    writeFileSync(join(root, 'day 2', 'same.png'), c)
    writeFileSync(join(root, 'notes.txt'), 'not a picture\n')
    writeFileSync(join(root, '.hidden.png'), hidden)
    const unreadable = unreadableFile(root, await png(5))
    cleanups.push(unreadable.shorten)

    const first = await putsDuring(() => atelier(['upload', root]))
    const ran = first.result
    expect(ran.code, ran.stderr).toBe(0)
    const lines = ran.stdout.trimEnd().split('\n')
    expect(lines[0]).toMatch(/^3 uploaded, 1 skipped as a duplicate, 0 failed \(0\.0 MiB sent in /)
    expect(lines.slice(1)).toEqual([
      expect.stringMatching(
        new RegExp(
          `^  unreadable ${unreadable.relativePath}: ENAMETOOLONG: .*longer than the system allows`,
        ),
      ),
      // Each file left out is named, with its reason.
      '  left out: 2 files or folders',
      '    .hidden.png (hidden)',
      '    notes.txt (not an image or video)',
    ])
    // One line per file's fate; which of the identical pair goes first is the scheduler's call.
    const fates = ran.stderr.trimEnd().split('\n').sort()
    const pair = ['day 1/raw/b.png', 'day 2/same.png']
    const kept = fates.find((line) => pair.some((path) => line === `uploaded ${path}`)) ?? ''
    const keptPath = kept.replace('uploaded ', '')
    expect(fates).toEqual(
      [
        'uploaded cover.png',
        'uploaded day 1/a.png',
        `uploaded ${keptPath}`,
        `duplicate ${pair.find((path) => path !== keptPath) ?? ''}`,
      ].sort(),
    )
    // Storage saw each distinct file's bytes once, and accepted them.
    expect(first.puts.map((put) => put.status)).toEqual([200, 200, 200])
    expect(sum(first.puts.map((put) => put.bytes))).toBe(a.length + b.length + c.length)

    const tree = await folders()
    // Sub-folders mirrored; none for the chain that holds only the unreadable file.
    expect(
      tree
        .map((f) => f.path)
        .filter((path) => path.startsWith('/shoot'))
        .sort(),
    ).toEqual(['/shoot', '/shoot/day 1', '/shoot/day 1/raw', '/shoot/day 2'])
    const where = new Map(tree.map((f) => [f.id, f.path]))
    const uploaded = (await assets()).filter((x) =>
      where.get(x.folder_id ?? '')?.startsWith('/shoot'),
    )
    expect(
      uploaded.map((x) => [`${where.get(x.folder_id ?? '') ?? ''}/${x.name}`, x.sha256]).sort(),
    ).toEqual(
      [
        ['/shoot/cover.png', sha256(a)],
        ['/shoot/day 1/a.png', sha256(b)],
        [`/shoot/${keptPath}`, sha256(c)],
      ].sort(),
    )

    // The same command again: the ledger's manifest says everything is done, and the summary
    // says nothing was uploaded this time.
    const told = await putsDuring(() => atelier(['upload', root]))
    expect(told.result.code, told.result.stderr).toBe(0)
    expect(told.puts).toEqual([])
    expect(told.result.stdout).toMatch(
      /^0 uploaded, 4 already there, 0 skipped as duplicates, 0 failed \(0\.0 MiB sent in /,
    )
    const again = await putsDuring(() => atelier(['--json', 'upload', root]))
    expect(again.result.code, again.result.stderr).toBe(0)
    expect(again.result.stderr).toBe('')
    expect(again.puts).toEqual([])
    const summary = JSON.parse(again.result.stdout) as FolderUploadSummary
    expect(summary).toEqual({
      manifestId: expect.stringMatching(/^[0-9a-f-]{36}$/),
      state: 'finished',
      files: { total: 4, uploaded: 0, duplicates: 0, failed: 0, left: 0, already: 4 },
      bytes: { total: a.length + b.length + 2 * c.length, sent: 0 },
      failures: [],
      problems: [
        {
          relativePath: unreadable.relativePath,
          kind: 'file',
          code: 'ENAMETOOLONG',
          message: expect.stringMatching(/longer than the system allows/),
        },
      ],
      skipped: { ...NO_SKIPS, hidden: 1, notMedia: 1 },
      leftOut: [
        { relativePath: '.hidden.png', reason: 'hidden' },
        { relativePath: 'notes.txt', reason: 'notMedia' },
      ],
      elapsedMs: expect.any(Number),
    })
    const after = (await assets()).filter((x) => where.get(x.folder_id ?? '')?.startsWith('/shoot'))
    expect(after.map((x) => x.id).sort()).toEqual(uploaded.map((x) => x.id).sort())
  })

  it('exits 1 and lists each failed file with its code when storage keeps refusing, then retries them', async () => {
    const { sandbox } = started()
    const root = join(scratch, 'refused')
    mkdirSync(root)
    const p = await png(21)
    const q = await png(22)
    writeFileSync(join(root, 'p.png'), p)
    writeFileSync(join(root, 'q.png'), q)
    const args = ['upload', root, '--folder', 'Refused uploads']
    // A fault that never clears; Retry-After 0 keeps the five attempts per part quick.
    const set = await sandbox.call('PUT', '/_sandbox/faults', {
      body: {
        rules: [{ method: 'PUT', pathPrefix: '/_storage/', status: 503, retryAfterSeconds: 0 }],
      },
    })
    expect(set.status).toBe(200)
    let refused: { result: CliRun; puts: StoragePut[] }
    try {
      refused = await putsDuring(() => atelier(args))
    } finally {
      await sandbox.call('DELETE', '/_sandbox/faults')
    }
    const { result } = refused
    expect(result.code, result.stderr).toBe(1)
    const lines = result.stdout.trimEnd().split('\n')
    expect(lines[0]).toMatch(/^0 uploaded, 0 skipped as duplicates, 2 failed \(/)
    expect(lines.slice(1).sort()).toEqual([
      expect.stringMatching(
        /^ {2}failed p\.png: STORAGE_UNREACHABLE: Part 1 of .*p\.png could not be sent to storage \(storage answered HTTP 503/,
      ),
      expect.stringMatching(
        /^ {2}failed q\.png: STORAGE_UNREACHABLE: Part 1 of .*q\.png could not be sent to storage/,
      ),
    ])
    expect(result.stderr).toContain(
      'atelier: 2 files failed; see above. Run the same command again to retry them.\n',
    )
    // Each file's one part was tried as often as the retry policy allows, and never accepted.
    expect(refused.puts).toHaveLength(2 * DEFAULT_TRANSFER_RETRY.attempts)
    expect(new Set(refused.puts.map((put) => put.status))).toEqual(new Set([503]))
    const shas = new Set([sha256(p), sha256(q)])
    expect((await assets()).filter((x) => shas.has(x.sha256))).toEqual([])

    // The fault is gone: the same command tries the failed files again.
    const retried = await atelier(['--json', ...args])
    expect(retried.code, retried.stderr).toBe(0)
    const summary = JSON.parse(retried.stdout) as FolderUploadSummary
    expect(summary).toMatchObject({
      state: 'finished',
      files: { total: 2, uploaded: 2, duplicates: 0, failed: 0, left: 0 },
      bytes: { total: p.length + q.length, sent: p.length + q.length },
      failures: [],
    })
    const folderId = await folderIdAt('/Refused uploads')
    expect(
      (await assets())
        .filter((x) => x.folder_id === folderId)
        .map((x) => [x.name, x.sha256])
        .sort(),
    ).toEqual([
      ['p.png', sha256(p)],
      ['q.png', sha256(q)],
    ])
  })

  it('prints one JSON document under --json when files fail, as the README promises', async () => {
    const { sandbox } = started()
    const root = join(scratch, 'refused-json')
    mkdirSync(root)
    writeFileSync(join(root, 'r.png'), await png(23))
    await sandbox.call('PUT', '/_sandbox/faults', {
      body: {
        rules: [{ method: 'PUT', pathPrefix: '/_storage/', status: 503, retryAfterSeconds: 0 }],
      },
    })
    let ran: CliRun
    try {
      ran = await atelier(['--json', 'upload', root])
    } finally {
      await sandbox.call('DELETE', '/_sandbox/faults')
    }
    expect(ran.code).toBe(1)
    const documents = ran.stdout.trimEnd().split('\n')
    expect(documents, ran.stdout).toHaveLength(1)
    expect(documents[0]).toMatch(/UPLOAD_FAILED|STORAGE_UNREACHABLE/)
  })

  it('refuses bad input with exit 2 and a clear message, and uploads nothing', async () => {
    const root = join(scratch, 'untouched')
    mkdirSync(root)
    const bytes = await png(31)
    writeFileSync(join(root, 'fresh.png'), bytes)
    const before = (await assets()).map((x) => x.id).sort()

    const cases: [string[], RegExp][] = [
      [
        ['upload', root, '--concurrency', '0'],
        /^atelier: --concurrency takes a whole number from 1 to 64, not "0"\.\n$/,
      ],
      [
        ['upload', root, '--media', 'audio'],
        /^atelier: --media takes image, video or both \(image,video\), not "audio"\.\n$/,
      ],
      [
        ['upload', join(scratch, 'no-such-folder')],
        /^atelier: There is no folder at .*no-such-folder\. Check the path/,
      ],
    ]
    for (const [args, message] of cases) {
      const { result, puts } = await putsDuring(() => atelier(args))
      expect(result.code, args.join(' ')).toBe(2)
      expect(result.stderr).toMatch(message)
      expect(result.stdout).toBe('')
      expect(puts).toEqual([])
    }
    expect((await assets()).map((x) => x.id).sort()).toEqual(before)
    expect((await assets()).some((x) => x.sha256 === sha256(bytes))).toBe(false)
  })

  it('makes no asset folder for a folder that is not there', async () => {
    const missing = join(scratch, 'not-there-either')
    const ran = await atelier(['upload', missing])
    expect(ran.code).toBe(2)
    expect((await folders()).map((f) => f.path)).not.toContain('/not-there-either')
  })

  /**
   * The real command is killed with SIGKILL at seeded random points while parts are on the wire,
   * then run to the end. Kill points are byte counts at the proxy, drawn so that every kill
   * lands before the upload could have finished.
   */
  it('goes on after SIGKILLs, re-sending at most the parts that were in flight, one asset per content', async () => {
    const SEED = 0x5eed_2024
    const KILLS = 5
    const PARTS = 2
    const { keyring, proxy } = started()
    const random = mulberry32(SEED)
    const root = join(scratch, 'takes')
    mkdirSync(join(root, 'a copies'), { recursive: true })
    const sizes = [20 * MiB + 12_345, 22 * MiB + 777, 24 * MiB - 1_001]
    const videos = sizes.map((size) => randomVideo(size))
    videos.forEach((bytes, i) => {
      writeFileSync(join(root, `take-${i + 1}.mp4`), bytes)
    })
    // Listed first: the copy and the original are hashed side by side and either may start
    // sending; after a kill the one whose upload is under way must go on, not the other.
    writeFileSync(join(root, 'a copies', 'take-1.mp4'), videos[0] ?? '')
    const distinctBytes = sum(sizes)
    const args = ['upload', root, '--concurrency', '3', '--parts', String(PARTS)]

    // `late`: PUTs the child began between the look at what was open and its death (the kill
    // is not instant); a CI run once saw one cut and counted nowhere.
    const kills: { threshold: number; open: StoragePut[]; seen: number; late: StoragePut[] }[] = []
    const firstPut = proxy.puts.length
    for (let run = 1; run <= KILLS; run++) {
      // At most 12 MiB a run: five runs send less than the 66 MiB the upload needs.
      const threshold = Math.floor((2 + random() * 10) * MiB)
      const before = proxy.puts.length
      const child = spawn(
        process.execPath,
        [join(repoRoot, 'bin', 'atelier.mjs'), '--home', home, ...args],
        {
          cwd: repoRoot,
          env: keyring.env,
          stdio: ['ignore', 'pipe', 'pipe'],
        },
      )
      let stderr = ''
      child.stdout.resume()
      child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()))
      const exited = new Promise<NodeJS.Signals | number | null>((resolve) => {
        child.on('close', (code, signal) => {
          resolve(signal ?? code)
        })
      })
      proxy.onBytes = () => {
        if (kills.length === run) return
        if (sum(proxy.puts.slice(before).map((put) => put.bytes)) < threshold) return
        kills.push({ threshold, open: proxy.open(), seen: proxy.puts.length, late: [] })
        child.kill('SIGKILL')
      }
      const guard = setTimeout(() => child.kill('SIGKILL'), 30_000)
      const ended = await exited
      clearTimeout(guard)
      proxy.onBytes = null
      expect(kills, `run ${run} (seed ${SEED}) ended without its kill: ${stderr}`).toHaveLength(run)
      expect(ended).toBe('SIGKILL')
      await within(proxy.idle(), 10_000, 'the cut PUTs to settle')
      const kill = kills[run - 1]
      if (kill) kill.late = proxy.puts.slice(kill.seen)
    }

    const final = await putsDuring(() => atelier(['--json', ...args]))
    expect(final.result.code, final.result.stderr).toBe(0)
    const summary = JSON.parse(final.result.stdout) as FolderUploadSummary
    expect(summary).toMatchObject({
      state: 'finished',
      files: { total: 4, failed: 0, left: 0 },
      failures: [],
    })
    // The runs that were killed finished some files: this one counts them as already there.
    const { uploaded, duplicates, already } = summary.files
    expect(uploaded + duplicates + already).toBe(4)
    // What the command says it sent is what reached storage.
    expect(summary.bytes.sent).toBe(sum(final.puts.map((put) => put.bytes)))

    // Every local file is an asset with its bytes, and each content is one asset.
    // Whichever of the original and its copy sent the bytes holds the asset: the folder or its
    // 'a copies' sub-folder.
    const inTree = new Set<string | null>([
      await folderIdAt('/takes'),
      await folderIdAt('/takes/a copies'),
    ])
    const everything = await assets()
    const mine = everything.filter((x) => inTree.has(x.folder_id))
    const localShas = [...videos, videos[0] ?? Buffer.alloc(0)].map(sha256)
    expect(new Set(mine.map((x) => x.sha256))).toEqual(new Set(localShas))
    expect(mine).toHaveLength(videos.length)
    for (const sha of new Set(localShas)) {
      expect(everything.filter((x) => x.sha256 === sha)).toHaveLength(1)
    }
    for (const asset of mine) {
      const response = await fetch(asset.url ?? '')
      const bytes = Buffer.from(await response.arrayBuffer())
      expect(bytes.length).toBe(asset.size_bytes)
      expect(sha256(bytes)).toBe(asset.sha256)
    }

    // The bound: bytes sent twice were all in PUTs a kill cut, at most one part per stream that
    // was in flight then, and never more streams than --parts.
    const puts = proxy.puts.slice(firstPut)
    const cutAtKill = new Set(kills.flatMap((kill) => [...kill.open, ...kill.late]))
    for (const kill of kills) {
      expect(kill.open.length).toBeGreaterThanOrEqual(1)
      expect(kill.open.length).toBeLessThanOrEqual(PARTS)
    }
    const refused = puts.filter((put) => put.status !== 200)
    expect(refused.every((put) => cutAtKill.has(put))).toBe(true)
    expect(puts.every((put) => put.bytes <= PART)).toBe(true)
    const resent = sum(puts.map((put) => put.bytes)) - distinctBytes
    const cutBytes = sum(refused.map((put) => put.bytes))
    const inFlightBound = sum(kills.map((kill) => kill.open.length + kill.late.length)) * PART
    expect(resent).toBeGreaterThanOrEqual(0)
    expect(resent, `seed ${SEED}`).toBeLessThanOrEqual(cutBytes)
    expect(cutBytes).toBeLessThanOrEqual(inFlightBound)
    expect(inFlightBound).toBeLessThanOrEqual(KILLS * PARTS * PART)
  })
})
