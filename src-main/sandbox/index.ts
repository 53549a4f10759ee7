import { randomBytes } from 'node:crypto'
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { AddressInfo } from 'node:net'
import { Accounts, ALL_SCOPES } from './accounts'
import { BlobStore } from './blobs'
import { systemClock, type Clock } from './clock'
import { loadContract } from './contract'
import { openSandboxDb } from './db'
import { Faults, type FaultRule } from './faults'
import { keptKeys, type SandboxKeys } from './kept-keys'
import { createAreas } from './areas'
import { SandboxEvents } from './events'
import { CATALOGS } from './models'
import { seedReferenceData } from './seed'
import { buildServer } from './server'
import type { SandboxServices } from './services'
import { RecordStore } from './store'

export interface SandboxOptions {
  /** 0 (the default) picks a free port. The sandbox only ever listens on 127.0.0.1. */
  port?: number
  /** Keeps everything (database, blobs) in this folder; a temp folder, removed at close, otherwise. */
  dataDir?: string
  /** Nominal model latency in milliseconds (default 300). */
  latencyMs?: number
  faults?: FaultRule[]
  /** Check every JSON answer against the contract; tests switch this on. */
  checkResponses?: boolean
  clock?: Clock
  random?: () => number
}

export type { SandboxKeys } from './kept-keys'

export interface RunningSandbox {
  url: string
  orgId: string
  /** A second organization the admin key may select with X-Organization-Id. */
  teamOrgId: string
  otherOrgId: string
  keys: SandboxKeys
  services: SandboxServices
  /** The operationIds of the contract that have a handler. */
  implemented: ReadonlySet<string>
  close: () => Promise<void>
}

const INITIAL_BALANCE_MICRO = 1_000 * 1_000_000

export async function startSandbox(options: SandboxOptions = {}): Promise<RunningSandbox> {
  const temporary = options.dataDir === undefined
  const dataDir = options.dataDir ?? mkdtempSync(join(tmpdir(), 'atelier-sandbox-'))
  mkdirSync(join(dataDir, 'blobs'), { recursive: true })
  const clock = options.clock ?? systemClock
  const random = options.random ?? Math.random
  const db = openSandboxDb(join(dataDir, 'sandbox.db'))
  const store = new RecordStore(db, clock)
  const accounts = new Accounts(db, clock)
  const contract = loadContract()
  const faults = new Faults(random)
  if (options.faults) faults.set(options.faults)

  seedReferenceData(store, contract, CATALOGS)
  const main = accounts.ensureOrg('Atelier Sandbox', INITIAL_BALANCE_MICRO)
  const team = accounts.ensureOrg('Sandbox Team', INITIAL_BALANCE_MICRO)
  const other = accounts.ensureOrg('Other Studio', INITIAL_BALANCE_MICRO)
  const limitedScopes = ALL_SCOPES.filter((s) => s !== 'evaluations:edit' && s !== 'sandbox:admin')
  const mint = (): SandboxKeys => ({
    admin: accounts.mintKey('admin', main.id, ALL_SCOPES, [team.id]),
    limited: accounts.mintKey('limited', main.id, limitedScopes),
    otherOrg: accounts.mintKey(
      'otherOrg',
      other.id,
      ALL_SCOPES.filter((s) => s !== 'sandbox:admin'),
    ),
  })
  // A sandbox in a temp folder is gone at close; one with a data folder keeps its keys there.
  const keys = temporary ? mint() : keptKeys(dataDir, accounts, mint)

  const urlSigningKey = randomBytes(32)
  const services: SandboxServices = {
    db,
    store,
    accounts,
    blobs: new BlobStore(join(dataDir, 'blobs'), urlSigningKey),
    contract,
    faults,
    events: new SandboxEvents(),
    clock,
    random,
    config: {
      dataDir,
      latencyMs: options.latencyMs ?? 300,
      baseUrl: '',
      urlSigningKey,
      checkResponses: options.checkResponses ?? false,
    },
  }
  const areas = createAreas(services)
  const app = await buildServer(services, areas)
  await app.listen({ port: options.port ?? 0, host: '127.0.0.1' })
  const { port } = app.server.address() as AddressInfo
  services.config.baseUrl = `http://127.0.0.1:${port}`

  let closed = false
  return {
    url: services.config.baseUrl,
    orgId: main.id,
    teamOrgId: team.id,
    otherOrgId: other.id,
    keys,
    services,
    implemented: new Set(areas.flatMap((area) => Object.keys(area.handlers))),
    close: async () => {
      if (closed) return
      closed = true
      for (const area of areas) await area.stop?.()
      await app.close()
      db.close()
      if (temporary) rmSync(dataDir, { recursive: true, force: true })
    },
  }
}
