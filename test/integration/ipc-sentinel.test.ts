import { randomUUID } from 'node:crypto'
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import sharp from 'sharp'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { encodeCursor, timeMs } from '../../src-main/db'
import { createHandlers, dispatchIpc, type IpcHandlers } from '../../src-main/ipc'
import { openLogger, type Logger } from '../../src-main/log'
import type { SandboxKeys } from '../../src-main/sandbox'
import { seedHistory } from '../../src-main/sandbox/runs'
import { createSettingsService } from '../../src-main/settings'
import { CoreHost } from '../../src-main/workspace'
import type { UploadProgressEvent } from '../../src-shared/domain/assets'
import type { FlowRunEventMessage } from '../../src-shared/domain/flow-editor'
import type { FlowRunEvent } from '../../src-shared/domain/flow-run'
import type { RunDetail } from '../../src-shared/domain/run-page'
import {
  IPC_CHANNELS,
  type IpcChannel,
  type IpcEventName,
  type IpcEvents,
  type IpcResult,
  type IpcValue,
} from '../../src-shared/ipc'
import { keyFormsIn } from '../helpers/key-forms'
import {
  secretServiceAvailability,
  startSecretService,
  type SecretServiceSession,
} from '../helpers/keyring'
import { pictureFlow } from '../helpers/picture-flow'
import { startTestSandbox, type TestSandbox } from '../helpers/sandbox'

/**
 * Issue 9: no IPC answer ever carries a key. The key of a real sandbox goes in through
 * `profiles.add` (form → keychain), the app switches to that profile (keychain → backend →
 * client), and then every channel is called through the real dispatcher and handlers over the
 * real host and core, with valid arguments naming real records and with invalid ones, once
 * more while the service fails. Every answer, value or error, and every pushed event is
 * searched for the key in every form `keyForms` lists, its first 12 characters among them.
 */

const tools = secretServiceAvailability()

const PROFILE = 'sentinel'
const SPARE = 'sentinel-spare'

// ---- Fixture entries

/** Arguments made when their turn comes, from what the calls before answered. */
class Later {
  constructor(readonly make: () => unknown) {}
}
/** Arguments the channel's schema must refuse before any handler runs. */
class Invalid {
  constructor(readonly args: unknown) {}
}
const later = (make: () => unknown) => new Later(make)
const invalid = (args: unknown) => new Invalid(args)

type Kind = 'setup' | 'valid' | 'invalid' | 'faulted'

interface Answer {
  channel: IpcChannel
  kind: Kind
  args: unknown
  result: IpcResult<unknown>
}

// ---- A callback receiver of our own, for the failed run's delivery

interface Received {
  signature: string
}

interface Receiver {
  url: string
  /** The first request, as soon as it has arrived (10 s at most). */
  first: () => Promise<Received>
  close: () => Promise<void>
}

async function startReceiver(): Promise<Receiver> {
  let arrived: (r: Received) => void = () => undefined
  const first = new Promise<Received>((resolve) => {
    arrived = resolve
  })
  const server = http.createServer((req, res) => {
    req.resume()
    req.on('end', () => {
      arrived({ signature: String(req.headers['service-signature'] ?? '') })
      res.writeHead(200, { 'Content-Type': 'text/plain' }).end('taken')
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}/callbacks`,
    first: () =>
      Promise.race([
        first,
        new Promise<never>((_resolve, reject) =>
          setTimeout(() => {
            reject(new Error('the callback did not arrive within 10 s'))
          }, 10_000).unref(),
        ),
      ]),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => {
          resolve()
        })
      }),
  }
}

function keysOf(keys: SandboxKeys): [string, string][] {
  return [
    ['admin', keys.admin],
    ['limited', keys.limited],
    ['otherOrg', keys.otherOrg],
  ]
}

async function png(seed: number, size = 32): Promise<Buffer> {
  const background = { r: (seed * 37) % 256, g: (seed * 91) % 256, b: (seed * 53) % 256 }
  return sharp({ create: { width: size, height: size, channels: 3, background } })
    .png()
    .toBuffer()
}

describe.skipIf(!tools.available)(
  'the sentinel key through every IPC channel',
  { timeout: 120_000 },
  () => {
    let keyring: SecretServiceSession
    let sandbox: TestSandbox
    let receiver: Receiver
    let scratch: string
    let logger: Logger
    let host: CoreHost
    let handlers: IpcHandlers
    let sentinel: string
    const busBefore = process.env.DBUS_SESSION_BUS_ADDRESS

    /** Every key that must never come out, by who holds it. */
    const keys = new Map<string, string>()
    const answers: Answer[] = []
    const heard: { event: IpcEventName; payload: unknown }[] = []
    const listeners = new Set<() => void>()
    /** Errors a handler did not mean: they cross as INTERNAL, their cause is told here. */
    const internal: string[] = []
    /** Background work started by a call: waited for before the core is closed. */
    const pending: Promise<unknown>[] = []
    /** The flow run `flowRuns.cancel` stopped, for `flowRuns.resume` to go on with. */
    let canceled:
      | { flow: ReturnType<typeof pictureFlow>; flowRunId: string; finished: Promise<unknown> }
      | undefined

    const made = {
      failedRunId: '',
      batchId: '',
      callbackSecret: '',
      flowId: '',
      shootFolderId: '',
      assetId: '',
      evaluationId: '',
      slowUploadId: '',
      localImage: '',
      slowFolder: '',
      watchFolder: '',
    }

    /** The local sandbox's keys too, whenever it runs: they must not come out either. */
    function noteLocalKeys() {
      const local = host.sandbox()
      if (!local) return
      for (const [who, key] of keysOf(local.keys)) keys.set(`local ${who}@${local.url}`, key)
    }

    /** One call as the window makes it: validated, handled, and kept for the scan. */
    async function ask(channel: IpcChannel, args: unknown, kind: Kind = 'setup') {
      noteLocalKeys()
      const result = await dispatchIpc(handlers, channel, args, { shell: 'web' }, (_c, error) => {
        internal.push(`${channel}: ${error instanceof Error ? error.message : String(error)}`)
      })
      noteLocalKeys()
      answers.push({ channel, kind, args, result })
      return result
    }

    /** Text for this test's own messages: not even a failing test prints a key. */
    function redact(text: string): string {
      let out = text
      for (const key of keys.values()) out = out.replaceAll(key, '[KEY]')
      return out
    }

    async function must<C extends IpcChannel>(channel: C, args?: unknown): Promise<IpcValue<C>> {
      const result = await ask(channel, args)
      if (!result.ok) {
        throw new Error(redact(`${channel}: ${result.error.code} ${result.error.message}`))
      }
      return result.value as IpcValue<C>
    }

    /** The values a channel answered, oldest first. */
    function okValues<C extends IpcChannel>(channel: C): IpcValue<C>[] {
      return answers.flatMap((a) =>
        a.channel === channel && a.result.ok ? [a.result.value as IpcValue<C>] : [],
      )
    }

    function lastOk<C extends IpcChannel>(channel: C): IpcValue<C> {
      const value = okValues(channel).at(-1)
      if (value === undefined) throw new Error(`${channel} has not answered yet`)
      return value
    }

    /** The first event heard from `from` on that matches; bounded in time. */
    function nextEvent<E extends IpcEventName>(
      name: E,
      matches: (payload: IpcEvents[E]) => boolean,
      from = 0,
      timeoutMs = 30_000,
    ): Promise<IpcEvents[E]> {
      return new Promise((resolve, reject) => {
        const look = () => {
          const found = heard
            .slice(from)
            .find((e) => e.event === name && matches(e.payload as IpcEvents[E]))
          if (!found) return
          clearTimeout(timer)
          listeners.delete(look)
          resolve(found.payload as IpcEvents[E])
        }
        const timer = setTimeout(() => {
          listeners.delete(look)
          reject(new Error(`no ${name} event matched within ${timeoutMs} ms`))
        }, timeoutMs)
        listeners.add(look)
        look()
      })
    }

    const uploadEnded = (id: string) =>
      nextEvent('uploads.progress', (e: UploadProgressEvent) => {
        return e.upload.id === id && ['finished', 'failed', 'canceled'].includes(e.upload.state)
      })

    const flowRunEvent = (flowRunId: string, type: FlowRunEvent['type']) =>
      nextEvent('flowRuns.event', (m: FlowRunEventMessage) => {
        return m.flowRunId === flowRunId && m.event.type === type
      })

    /** Refreshes the run until `done` holds: bounded in count and time, each a real request. */
    async function refreshUntil(runId: string, done: (detail: RunDetail) => boolean) {
      const deadline = Date.now() + 15_000
      for (let round = 0; round < 200 && Date.now() < deadline; round++) {
        const { detail } = await must('runs.refresh', { runId })
        if (done(detail)) return detail
        await new Promise((resolve) => setTimeout(resolve, 50))
      }
      throw new Error(`run ${runId} did not reach the expected state in time`)
    }

    function modelId(slug: string): string {
      const id = host
        .openedCore()
        ?.databases.mirror.models.withSlug({ orgId: sandbox.orgId }, slug)?.id
      if (!id) throw new Error(`The mirror has no ${slug}.`)
      return id
    }

    const setFaults = (rules: object[]) =>
      sandbox.call('PUT', '/_sandbox/faults', { body: { rules } })
    const clearFaults = () => sandbox.call('DELETE', '/_sandbox/faults')

    beforeAll(async () => {
      ;[keyring, sandbox, receiver] = await Promise.all([
        startSecretService(),
        // Slow enough that a slow-render run is still running when it is canceled.
        startTestSandbox({ latencyMs: 100 }),
        startReceiver(),
      ])
      // The keychain binding finds the Secret Service on this process's session bus.
      process.env.DBUS_SESSION_BUS_ADDRESS = keyring.env.DBUS_SESSION_BUS_ADDRESS
      sentinel = sandbox.keys.admin
      for (const [who, key] of keysOf(sandbox.keys)) keys.set(`service ${who}`, key)
      await seedHistory(sandbox.services, sandbox.orgId, 60)

      // A run that fails and calls back, signed with a callback secret.
      const secret = await sandbox.call('POST', '/v1/callback-secrets', {
        body: { label: 'sentinel' },
      })
      const callback = secret.body as { id: string; plain_secret: string }
      made.callbackSecret = callback.plain_secret
      keys.set('callback secret', callback.plain_secret)
      const failed = await sandbox.call('POST', '/v1/models/atelier/flaky/runs', {
        body: {
          input: { prompt: 'a sentinel lighthouse', failure_rate: 1 },
          callback_url: receiver.url,
          callback_secret_id: callback.id,
        },
      })
      expect(failed.status).toBe(201)
      made.failedRunId = (failed.body as { id: string }).id
      const fine = await sandbox.call('POST', '/v1/models/atelier/text-to-image/runs', {
        body: { input: { prompt: 'a sentinel harbour', width: 96, height: 64 } },
      })
      expect(fine.status).toBe(201)
      // A batch, so that the Batches screen's channels answer a real record after the sync.
      const batch = await sandbox.call('POST', '/v1/batches', {
        body: {
          model: 'atelier/text-to-image',
          items: [{ input: { prompt: 'a sentinel batch', width: 64, height: 64 } }],
        },
      })
      expect(batch.status).toBe(201)
      made.batchId = (batch.body as { id: string }).id

      scratch = mkdtempSync(join(tmpdir(), 'atelier-ipc-sentinel-'))
      const shoot = join(scratch, 'shoot')
      made.slowFolder = join(scratch, 'slow')
      made.watchFolder = join(scratch, 'watched')
      for (const folder of [shoot, made.slowFolder, made.watchFolder]) mkdirSync(folder)
      for (let i = 0; i < 3; i++) {
        writeFileSync(join(shoot, `harbour ${i}.png`), await png(i + 1))
        writeFileSync(join(made.slowFolder, `dune ${i}.png`), await png(i + 11))
      }
      writeFileSync(join(made.watchFolder, 'gull.png'), await png(21))
      made.localImage = join(scratch, 'poster.png')
      writeFileSync(made.localImage, await png(31, 64))

      const home = join(scratch, 'home')
      mkdirSync(home)
      logger = openLogger({ home })
      // One attempt per request: the faulted calls must not wait out the client's backoff.
      host = new CoreHost({
        home,
        logger,
        core: { afterSync: [], client: { retry: { maxAttempts: 1 }, timeoutMs: 5_000 } },
      })
      host.onEvent((event, payload) => {
        heard.push({ event, payload })
        for (const listener of [...listeners]) listener()
      })
      await host.open()
      handlers = createHandlers({
        platform: process.platform,
        backend: () => host.backend()?.info ?? null,
        openExternal: () => Promise.resolve(),
        core: () => host.core(),
        settings: createSettingsService({ host, logger }),
      })

      // The key goes in as a person pastes it, and the app switches to it.
      await must('profiles.add', { name: PROFILE, baseUrl: sandbox.url, apiKey: sentinel })
      expect(keyring.lookup(PROFILE)).toBe(sentinel)
      await must('profiles.switch', { name: PROFILE })
      expect(host.backend()?.info).toMatchObject({ kind: 'service', url: sandbox.url })
      expect((await must('sync.start')).last?.outcome).toBe('ok')

      // Records made through the app: an uploaded asset in a folder, a local flow, a webhook.
      const from = heard.length
      const upload = await must('uploads.start', {
        path: shoot,
        folder: 'Sentinel shoot',
      })
      expect((await uploadEnded(upload.id)).upload.state).toBe('finished')
      await nextEvent('assets.changed', (e) => e.reason === 'uploaded', from)
      const tree = await must('assets.folders')
      made.shootFolderId = tree.folders.find((f) => f.name === 'Sentinel shoot')?.id ?? ''
      const inShoot = await must('assets.list', { folder: made.shootFolderId })
      made.assetId = inShoot.items[0]?.id ?? ''
      expect(made.assetId).not.toBe('')
      made.flowId = (await must('flows.create', { name: 'Sentinel flow' })).id
      await must('webhooks.create', {
        url: 'https://hooks.example.com/sentinel-setup',
        events: ['run.completed', 'run.failed'],
      })
      const evaluations = await must('evaluations.list', {})
      made.evaluationId = evaluations.items[0]?.id ?? ''
      expect(made.evaluationId).not.toBe('')
    }, 90_000)

    afterAll(async () => {
      await host.close()
      logger.close()
      await Promise.all([sandbox.close(), receiver.close()])
      await keyring.close()
      if (busBefore === undefined) delete process.env.DBUS_SESSION_BUS_ADDRESS
      else process.env.DBUS_SESSION_BUS_ADDRESS = busBefore
      rmSync(scratch, { recursive: true, force: true })
    })

    /**
     * For each channel, the calls made, in this order: cheap reads first, then what changes
     * records, then what closes the core (rebuild, sandbox) and switches or removes profiles.
     * A channel added to the contract fails to compile here until it gets its fixtures.
     */
    function fixtures(): Record<IpcChannel, unknown[]> {
      const failedRun = () => ({ runId: made.failedRunId })
      const importedId = () => lastOk('flows.import').id
      const pictureRunId = async () => {
        const { flowRunId } = lastOk('flowRuns.start')
        const end = (await flowRunEvent(flowRunId, 'flow-finished')).event
        const picture = (end.type === 'flow-finished' ? end.outputs.picture : null) as {
          run_id?: string
        } | null
        if (!picture?.run_id) throw new Error('The flow made no picture on the service.')
        return picture.run_id
      }
      const emptyFolderId = () => lastOk('assets.createFolder').id
      const setting = {
        syncIntervalMinutes: 60,
        mirror: { runs: true, evaluations: true, assets: true },
        mediaDownloads: false,
        mediaCapMiB: 512,
      }
      return {
        'app.getInfo': [undefined, invalid({ verbose: true })],
        'app.openExternal': [{ url: 'https://example.com/docs' }, invalid({ url: 'file:///etc' })],
        'account.summary': [undefined, invalid(1)],
        'sync.getStatus': [undefined, invalid({})],
        'sync.start': [undefined, invalid(null)],
        'search.query': [
          { text: 'lighthouse' },
          { kind: 'runs', status: 'failed' },
          { kind: 'assets', text: 'harbour' },
          invalid({ limit: 0 }),
        ],
        'runs.list': [{}, { statuses: ['failed'] }, { text: 'sentinel' }, invalid({ limit: 0 })],
        'runs.filterOptions': [undefined, invalid({})],
        'batches.list': [{}, { limit: 1 }, invalid({ limit: 0 })],
        'batches.get': [{ id: made.batchId }, { id: 'no-such-batch' }, invalid({})],
        'runs.refresh': [
          later(async () => {
            // The delivery is on the run's page once the callback arrived and was answered.
            await receiver.first()
            await refreshUntil(
              made.failedRunId,
              (d) => d.deliveries[0]?.status_code === 'succeeded',
            )
            return failedRun()
          }),
          { runId: randomUUID() },
          invalid({}),
        ],
        'runs.get': [failedRun(), { runId: randomUUID() }, invalid({ runId: '' })],
        'runs.logs': [
          later(() => {
            // Its log is one page long, so no page gives a `next`: the cursor after its first
            // line is made as the list makes its cursors (time, then local order).
            const [first] = lastOk('runs.refresh').detail.logs.items
            if (!first) throw new Error('The failed run has no log.')
            return { ...failedRun(), after: encodeCursor(timeMs(first.created_at, 'log'), 0) }
          }),
          // A cursor of no list: refused with its own code, not INTERNAL.
          later(() => ({ ...failedRun(), after: 'bm90LWEtY3Vyc29y' })),
          invalid({ runId: 'x' }),
        ],
        'runs.cancel': [
          later(async () => {
            const slow = await sandbox.call('POST', '/v1/models/atelier/slow-render/runs', {
              body: { input: { prompt: 'a slow sentinel', width: 1536, height: 1536 } },
            })
            const runId = (slow.body as { id: string }).id
            await must('runs.refresh', { runId })
            return { runId }
          }),
          // Finished already: CONFLICT.
          failedRun(),
          invalid({ runId: 5 }),
        ],
        'runs.rerun': [
          later(() => ({ ...failedRun(), idempotencyKey: randomUUID() })),
          invalid({ runId: 'x', idempotencyKey: 'short' }),
        ],
        'deliveries.redeliver': [failedRun(), { runId: randomUUID() }, invalid({})],
        'deliveries.verify': [
          later(async () => {
            const { signature } = await receiver.first()
            const delivery = lastOk('runs.get').deliveries[0]
            return {
              ...failedRun(),
              deliveryId: delivery?.id ?? '',
              signature,
              secret: made.callbackSecret,
              remember: true,
            }
          }),
          // The secret remembered in the keychain now.
          later(async () => {
            const { signature } = await receiver.first()
            const deliveryId = lastOk('runs.get').deliveries[0]?.id ?? ''
            return { ...failedRun(), deliveryId, signature }
          }),
          later(() => ({
            ...failedRun(),
            deliveryId: randomUUID(),
            signature: 'not hex',
            secret: made.callbackSecret,
          })),
          invalid({ runId: 'x', deliveryId: 'y' }),
        ],
        'evaluations.list': [
          {},
          { verdict: 'failed' },
          { text: 'portrait' },
          invalid({ limit: 0 }),
        ],
        'evaluations.get': [
          { id: made.evaluationId },
          { id: 'no-such-evaluation' },
          invalid({ id: 'has space' }),
        ],
        'evaluations.refresh': [{ id: made.evaluationId }, invalid({})],
        'evaluations.feedback': [
          { id: made.evaluationId, rating: 'up', reason: 'crisp edges' },
          { id: made.evaluationId, rating: null },
          invalid({ id: 'x', rating: null, reason: 'a reason without a rating' }),
        ],
        'evaluations.submit': [
          later(() => ({
            image: { assetId: made.assetId },
            jobClass: 'quick',
            prompt: 'a harbour',
          })),
          { image: { path: made.localImage } },
          invalid({ image: { path: 'relative/poster.png' } }),
        ],
        'flows.palette': [undefined, invalid({})],
        'flows.runs': [{ id: made.flowId }, { id: randomUUID() }, invalid({ id: '' })],
        'flows.list': [undefined, invalid({})],
        'flows.get': [{ id: made.flowId }, { id: randomUUID() }, invalid({ id: '' })],
        'flows.create': [{ name: 'Sentinel copy', from: made.flowId }, invalid({ name: '   ' })],
        'flows.save': [
          later(() => ({
            id: made.flowId,
            flow: pictureFlow(made.flowId, 'Sentinel flow', modelId('atelier/text-to-image'), 128),
          })),
          invalid({ id: 'x', flow: 'not a flow' }),
        ],
        'flows.rename': [{ id: made.flowId, name: 'Sentinel poster' }, invalid({})],
        'flows.saveVersion': [{ id: made.flowId, name: 'first' }, invalid({ id: 'x' })],
        'flows.restoreVersion': [
          later(() => ({
            id: made.flowId,
            version: lastOk('flows.saveVersion').version,
          })),
          invalid({ id: 'x', version: 0 }),
        ],
        'flows.export': [{ id: made.flowId }, invalid({})],
        'flows.import': [
          later(() => ({ json: lastOk('flows.export').json })),
          { json: '{ not json' },
          invalid({ json: '' }),
        ],
        'flows.delete': [later(() => ({ id: importedId() })), invalid({ id: '' })],
        'flows.restore': [later(() => ({ id: importedId() })), invalid({})],
        'flows.check': [
          later(() => ({
            flow: pictureFlow(randomUUID(), 'Check', modelId('atelier/text-to-image'), 128),
            inputs: { prompt: 'a checked harbour' },
          })),
          { flow: { name: 'no id' } },
          invalid({}),
        ],
        'flowRuns.start': [
          later(() => ({
            flow: pictureFlow(randomUUID(), 'Run', modelId('atelier/text-to-image'), 128),
            inputs: { prompt: 'a sentinel kite' },
          })),
          invalid({ flow: {}, concurrency: 0 }),
        ],
        'media.preview': [
          later(async () => {
            const { flowRunId } = lastOk('flowRuns.start')
            const end = (await flowRunEvent(flowRunId, 'flow-finished')).event
            const picture = (end.type === 'flow-finished' ? end.outputs.picture : null) as {
              sha256: string
              url: string
            } | null
            if (!picture) throw new Error('The flow made no picture.')
            return { sha256: picture.sha256, url: picture.url, size: 64 }
          }),
          { sha256: 'ab'.repeat(32) },
          invalid({ sha256: 'not a hash' }),
        ],
        // The flow run's picture, by the service run that made it (issue 20).
        'remix.inspect': [
          later(async () => ({ source: { runId: await pictureRunId() } })),
          { source: { runId: randomUUID() } },
          invalid({ source: {} }),
        ],
        'remix.open': [
          later(async () => ({ source: { runId: await pictureRunId() }, as: 'new' as const })),
          { source: { file: { name: 'notes.txt', base64: 'aGVsbG8=' } } },
          invalid({ source: { runId: '' }, as: 'copy' }),
        ],
        // The flow run's picture saved with its record inside (issue 20).
        'outputs.export': [
          later(async () => ({ runId: await pictureRunId(), index: 0 })),
          { runId: randomUUID(), index: 0 },
          invalid({ runId: '', index: -1 }),
        ],
        // A ComfyUI workflow in the API form, made a workflow of the organization (issue 20).
        'workflows.import': [
          {
            file: {
              name: 'sentinel-workflow.json',
              base64: Buffer.from(
                JSON.stringify({
                  '1': { class_type: 'CLIPTextEncode', inputs: { text: 'a sentinel' } },
                  '2': { class_type: 'SaveImage', inputs: { images: ['1', 0] } },
                }),
              ).toString('base64'),
            },
          },
          { file: { name: 'notes.txt', base64: 'aGVsbG8=' } },
          invalid({ file: { name: '', base64: '' } }),
        ],
        'flowRuns.cancel': [
          later(async () => {
            const flow = pictureFlow(randomUUID(), 'Slow', modelId('atelier/slow-render'), 1536)
            const { flowRunId } = await must('flowRuns.start', {
              flow,
              inputs: { prompt: 'a slow sentinel tide' },
            })
            await flowRunEvent(flowRunId, 'node-remote-run')
            const finished = flowRunEvent(flowRunId, 'flow-finished')
            pending.push(finished)
            canceled = { flow, flowRunId, finished }
            return { flowRunId }
          }),
          { flowRunId: randomUUID() },
          invalid({}),
        ],
        'flowRuns.resume': [
          // The run canceled above, once it has ended: it goes on under its own id.
          later(async () => {
            if (!canceled) throw new Error('No flow run was canceled before the resume.')
            await canceled.finished
            const { flow, flowRunId } = canceled
            // The resumed run's own end, heard from now on; the mirror's rebuild waits for it.
            pending.push(
              nextEvent(
                'flowRuns.event',
                (m) => m.flowRunId === flowRunId && m.event.type === 'flow-finished',
                heard.length,
              ),
            )
            return { flow, flowRunId }
          }),
          // No such flow run here: FLOW_RUN_NOT_FOUND, with nothing sent.
          {
            flow: pictureFlow(randomUUID(), 'Resumed', modelId('atelier/slow-render'), 64),
            flowRunId: randomUUID(),
          },
          invalid({ flowRunId: '' }),
        ],
        'assets.folders': [undefined, invalid({})],
        'assets.list': [
          {},
          { folder: made.shootFolderId },
          { text: 'harbour', mediaType: 'image' },
          invalid({ limit: 0 }),
        ],
        'assets.get': [{ id: made.assetId }, { id: 'no-such-asset' }, invalid({ id: '' })],
        'assets.createFolder': [{ name: 'Sentinel empty' }, invalid({ name: 'a/b' })],
        'assets.renameFolder': [
          later(() => ({ id: emptyFolderId(), name: 'Sentinel emptied' })),
          invalid({ id: 'x', name: '' }),
        ],
        'assets.moveFolder': [
          later(() => ({ id: emptyFolderId(), parentId: made.shootFolderId })),
          invalid({ id: 'x' }),
        ],
        'assets.move': [
          later(() => ({ ids: [made.assetId], folderId: emptyFolderId() })),
          { ids: [made.assetId], folderId: made.shootFolderId },
          invalid({ ids: [], folderId: null }),
        ],
        'assets.deleteFolder': [
          later(() => ({ id: emptyFolderId() })),
          // Not empty: FOLDER_NOT_EMPTY.
          { id: made.shootFolderId },
          invalid({}),
        ],
        'assets.rename': [
          { id: made.assetId, name: 'Sentinel renamed.png' },
          { id: 'no-such-asset', name: 'Nowhere.png' },
          invalid({ id: made.assetId, name: ' ' }),
        ],
        'assets.delete': [{ ids: [made.assetId] }, invalid({ ids: [] })],
        // Both held deletes are taken back: nothing after them loses its records.
        'assets.undoDelete': [
          later(() => ({ undoId: okValues('assets.deleteFolder')[0]?.undoId })),
          later(() => ({ undoId: lastOk('assets.delete').undoId })),
          { undoId: 'no-such-delete' },
          invalid({}),
        ],
        'uploads.browse': [
          { path: scratch },
          {},
          { path: join(scratch, 'nowhere') },
          invalid({ path: '' }),
        ],
        'uploads.chooseFolder': [undefined, invalid({})],
        'uploads.list': [undefined, invalid({})],
        'uploads.start': [
          later(async () => {
            // Each file's upload slowed down, so that pause, resume and cancel find it running.
            await setFaults([{ operationId: 'createAssetUpload', latencyMs: 1_500 }])
            return { path: made.slowFolder, folder: 'Sentinel slow', concurrency: 1 }
          }),
          { path: join(scratch, 'nowhere') },
          invalid({ path: '' }),
        ],
        'uploads.pause': [
          later(() => {
            made.slowUploadId =
              okValues('uploads.start')
                .filter((u) => u.root === made.slowFolder)
                .at(-1)?.id ?? ''
            return { id: made.slowUploadId }
          }),
          { id: 'no-such-upload' },
          invalid({}),
        ],
        'uploads.resume': [later(() => ({ id: made.slowUploadId })), invalid({})],
        'uploads.cancel': [later(() => ({ id: made.slowUploadId })), invalid({})],
        'uploads.files': [
          later(async () => {
            await uploadEnded(made.slowUploadId)
            await clearFaults()
            return { id: made.slowUploadId }
          }),
          later(() => ({ id: okValues('uploads.start')[0]?.id, limit: 10 })),
          invalid({ id: 'x', limit: 0 }),
        ],
        'uploads.dismiss': [later(() => ({ id: made.slowUploadId })), invalid({})],
        'uploads.watch': [
          { path: made.watchFolder, folder: 'Sentinel watched' },
          invalid({ path: '' }),
        ],
        'uploads.watches': [undefined, invalid({})],
        'uploads.unwatch': [
          later(async () => {
            const watch = lastOk('uploads.watch')
            // Its first pass ends before it stops: nothing is left half sent.
            await nextEvent('uploads.progress', (e) => {
              return e.upload.root === watch.path && ['finished', 'failed'].includes(e.upload.state)
            })
            return { id: watch.id }
          }),
          { id: 'no-such-watch' },
          invalid({}),
        ],
        'webhooks.list': [undefined, invalid({})],
        'webhooks.create': [
          { url: 'https://hooks.example.com/sentinel', events: ['run.failed'] },
          invalid({ url: 'https://hooks.example.com/none', events: [] }),
        ],
        'webhooks.delete': [
          later(() => ({ id: lastOk('webhooks.create').webhook.id })),
          { id: randomUUID() },
          invalid({ id: 'not-a-webhook' }),
        ],
        'callbackSecrets.list': [undefined, invalid({})],
        // Its answer holds a new plain secret, the one place it may appear; the secret made for
        // the failed run's callback (a key of the scan) is in no answer.
        'callbackSecrets.create': [{ label: 'Sentinel receiver' }, invalid({ label: '   ' })],
        'callbackSecrets.remove': [
          later(() => ({ id: lastOk('callbackSecrets.create').callbackSecret.id })),
          // Not listed: answers null all the same.
          { id: randomUUID() },
          invalid({ id: 'not-a-secret' }),
        ],
        'settings.get': [undefined, invalid({})],
        'settings.set': [setting, invalid({ ...setting, syncIntervalMinutes: 0 })],
        'settings.storage': [undefined, invalid({})],
        'settings.rebuildMirror': [
          later(async () => {
            await Promise.all(pending)
            return { confirmed: true }
          }),
          invalid({}),
        ],
        'sandbox.status': [undefined, invalid({})],
        'sandbox.start': [undefined, invalid({})],
        'sandbox.reset': [{ confirmed: true }, invalid({ confirmed: false })],
        'sandbox.stop': [undefined, invalid({})],
        'profiles.list': [undefined, invalid({})],
        // The key itself goes in again, right and wrong: no refusal may quote it back.
        'profiles.add': [
          { name: SPARE, baseUrl: sandbox.url, apiKey: sentinel },
          { name: PROFILE, baseUrl: sandbox.url, apiKey: sentinel },
          { name: 'sentinel-wrong', baseUrl: sandbox.url, apiKey: `${sentinel}x` },
          { name: 'sentinel-gone', baseUrl: 'http://127.0.0.1:9', apiKey: sentinel },
          invalid({ name: 'x', baseUrl: sandbox.url, apiKey: `${sentinel} x` }),
          invalid({ name: 'has space', baseUrl: 'ftp://example.com', apiKey: '' }),
        ],
        'profiles.switch': [{ name: 'nobody' }, { name: PROFILE }, invalid({ name: 'has space' })],
        'profiles.remove': [
          // In use: PROFILE_IN_USE.
          { name: PROFILE },
          { name: SPARE },
          later(async () => {
            await must('profiles.switch', { name: null })
            return { name: PROFILE }
          }),
          invalid({}),
        ],
      }
    }

    it('makes the records it needs, with the sentinel key in the keychain and in use', async () => {
      expect(keyring.lookup(PROFILE)).toBe(sentinel)
      const account = await must('account.summary')
      // Only the sentinel key names this organization: every request went with it.
      expect(account).toMatchObject({ profileName: PROFILE, organization: { id: sandbox.orgId } })
      expect(made).toMatchObject({
        failedRunId: expect.any(String),
        flowId: expect.any(String),
        shootFolderId: expect.any(String),
        assetId: expect.any(String),
        evaluationId: expect.any(String),
      })
    })

    it('answers without the key while the service fails or cannot be reached', async () => {
      const online: [IpcChannel, unknown][] = [
        ['account.summary', undefined],
        ['sync.start', undefined],
        ['runs.refresh', { runId: made.failedRunId }],
        ['runs.cancel', { runId: made.failedRunId }],
        ['deliveries.redeliver', { runId: made.failedRunId }],
        ['evaluations.refresh', { id: made.evaluationId }],
        ['evaluations.submit', { image: { assetId: made.assetId } }],
        ['webhooks.list', undefined],
        ['webhooks.create', { url: 'https://hooks.example.com/f', events: ['run.failed'] }],
        ['callbackSecrets.list', undefined],
        ['callbackSecrets.create', { label: 'Sentinel faulted' }],
        ['flows.check', { flow: { name: 'no id' } }],
        ['profiles.add', { name: 'sentinel-faulted', baseUrl: sandbox.url, apiKey: sentinel }],
      ]
      const failures = [{ status: 503 }, { reset: 'before' }]
      try {
        for (const failure of failures) {
          expect((await setFaults([{ pathPrefix: '/v1', ...failure }])).status).toBe(200)
          for (const [channel, args] of online) await ask(channel, args, 'faulted')
        }
      } finally {
        await clearFaults()
      }
      const faulted = answers.filter((a) => a.kind === 'faulted')
      console.info(
        `ipc-sentinel, while failing: ${faulted
          .map((a) => `${a.channel} ${a.result.ok ? 'ok' : a.result.error.code}`)
          .join('; ')}`,
      )
      expect(faulted).toHaveLength(online.length * failures.length)
      // The failures reached the answers: they are errors that the scan below reads.
      expect(faulted.filter((a) => !a.result.ok).length).toBeGreaterThan(online.length)
      expect(keyring.lookup('sentinel-faulted')).toBeNull()
    })

    it('calls every channel, with valid and invalid arguments', async () => {
      const calls = fixtures()
      const notRefused: string[] = []
      for (const channel of Object.keys(calls) as IpcChannel[]) {
        for (const entry of calls[channel]) {
          if (entry instanceof Invalid) {
            const result = await ask(channel, entry.args, 'invalid')
            const code = result.ok ? 'ok' : result.error.code
            if (code !== 'INVALID_ARGUMENT') notRefused.push(`${channel}: ${code}`)
          } else {
            await ask(channel, entry instanceof Later ? await entry.make() : entry, 'valid')
          }
        }
      }
      expect(notRefused).toEqual([])

      const called = new Set(answers.filter((a) => a.kind === 'valid').map((a) => a.channel))
      expect(IPC_CHANNELS.filter((channel) => !called.has(channel))).toEqual([])
      for (const channel of IPC_CHANNELS) expect(calls[channel].length).toBeGreaterThan(0)

      // The key went the whole way and out again: removed from the keychain at the end.
      expect(keyring.lookup(PROFILE)).toBeNull()
      expect(keyring.lookup(SPARE)).toBeNull()
      expect(host.backend()?.info.kind).toBe('sandbox')

      const summary = IPC_CHANNELS.map((channel) => {
        const valid = answers.filter((a) => a.channel === channel && a.kind === 'valid')
        const ok = valid.filter((a) => a.result.ok).length
        const errors = valid.flatMap((a) => (a.result.ok ? [] : [a.result.error.code]))
        return { channel, ok, errors }
      })
      const answeredOk = summary.filter((s) => s.ok > 0)
      const validCalls = answers.filter((a) => a.kind === 'valid')
      console.info(
        [
          `ipc-sentinel: ${String(IPC_CHANNELS.length)} channels, ${String(answers.length)} calls ` +
            `(${String(validCalls.length)} valid, of which ${String(validCalls.filter((a) => a.result.ok).length)} ok; ` +
            `${String(answers.filter((a) => a.kind === 'invalid').length)} invalid; ` +
            `${String(answers.filter((a) => a.kind === 'faulted').length)} while failing; ` +
            `${String(answers.filter((a) => a.kind === 'setup').length)} setup)`,
          `${String(answeredOk.length)} channels answered ok at least once`,
          ...summary
            .filter((s) => s.ok === 0 || s.errors.length > 0)
            .map((s) => `  ${s.channel}: ${String(s.ok)} ok, errors ${s.errors.join(', ')}`),
        ].join('\n'),
      )
      // Most valid calls reach the handler with real records and answer; the rest are the
      // deliberate refusals (unknown ids, a finished run, a folder that is not empty).
      expect(answeredOk.length).toBeGreaterThanOrEqual(IPC_CHANNELS.length - 2)
      expect(internal).toEqual([])
    })

    it('no answer and no pushed event carries any key in any form', () => {
      // The scan can fail: it finds each form it looks for.
      const probe = JSON.stringify({
        header: `Bearer ${sentinel}`,
        encoded: Buffer.from(sentinel).toString('base64'),
        cut: `${sentinel.slice(0, 12)}…`,
      })
      expect(keyFormsIn(probe, sentinel)).toEqual(
        expect.arrayContaining(['utf8', 'base64', 'bearer', 'prefix12']),
      )

      expect(answers.length).toBeGreaterThan(IPC_CHANNELS.length * 2)
      expect(heard.map((e) => e.event)).toEqual(
        expect.arrayContaining(['sync.status', 'uploads.progress', 'flowRuns.event', 'app.notice']),
      )
      expect([...keys.keys()].some((who) => who.startsWith('local '))).toBe(true)
      const leaks: string[] = []
      for (const [who, key] of keys) {
        for (const [index, answer] of answers.entries()) {
          const forms = keyFormsIn(JSON.stringify(answer.result), key)
          if (forms.length > 0) {
            const args =
              answer.args === undefined ? '' : redact(JSON.stringify(answer.args)).slice(0, 120)
            leaks.push(
              `call ${String(index)} ${answer.channel} (${answer.kind}, ${args}): ${who} as ${forms.join(', ')}`,
            )
          }
        }
        for (const { event, payload } of heard) {
          const forms = keyFormsIn(JSON.stringify(payload), key)
          if (forms.length > 0) leaks.push(`event ${event}: ${who} as ${forms.join(', ')}`)
        }
      }
      expect(leaks).toEqual([])
    })
  },
)
