import { join } from 'node:path'
import { z } from 'zod'
import type { components } from '../../src-shared/api/schema.gen'
import type { CallbackSecretItem, CreatedCallbackSecret } from '../../src-shared/domain/settings'
import type { Backend } from '../core'
import type { ServiceClient } from '../service'
import { online, SettingsError } from './errors'
import { readJsonFile, writeJsonFile } from './json-file'

/**
 * Callback secrets (issue 8): the keys that sign a run's or a batch's callback. The service
 * offers one call for them, `POST /v1/callback-secrets`, whose answer holds `plain_secret` this
 * once; it has no list, get or delete (see `resources/openapi.yaml`). Decisions, and why:
 *
 * - The list is Atelier's own: what the creation answer said (id, label, fingerprint, created
 *   time), kept in `<home>/callback-secrets.json` per service and organization, newest first. So
 *   it holds the secrets made in Atelier on this computer, not those made elsewhere, and it
 *   answers offline. The plain secret is never in it: it goes to the window once, in the
 *   creation answer, and to no file, log or database (the logger is told to mask it as well).
 * - "Delete" takes a secret off that list; nothing is sent, as there is nothing to call. The
 *   service keeps the secret (runs that name it are still signed with it), and the window says
 *   so before it is removed. Removing one that is not listed answers null too: a second window
 *   or a double click is no error.
 * - Whose secrets: the profile's base URL and organization, so that two profiles of the same
 *   organization share a list. The local sandbox is `sandbox` and its organization: its URL
 *   changes with each start, and a reset (a new organization) empties its lists.
 * - Creating one is online only, OFFLINE when the service cannot be reached (as webhooks). The
 *   list is read before the service is asked, so a damaged file refuses before a secret is
 *   made; once made, the secret is answered even if the list cannot be written (the user's only
 *   chance to copy it), and the log says the list missed it.
 */

type Created = components['schemas']['CallbackSecretCreated']

/** Beside settings.json: `<home>/callback-secrets.json`. */
export const CALLBACK_SECRETS_FILE = 'callback-secrets.json'

/** The list a sandbox's secrets are kept under starts with this. */
const SANDBOX = 'sandbox'

/** The key of one service's organization in the file. */
export function callbackSecretsOwner(backend: Pick<Backend, 'info' | 'organizationId'>): string {
  const where = backend.info.kind === 'sandbox' ? SANDBOX : backend.info.url
  return `${where} ${backend.organizationId}`
}

const itemSchema = z.object({
  id: z.string().min(1),
  label: z.string(),
  fingerprint: z.string(),
  createdAt: z.string(),
})

// Not strict: a newer Atelier may add fields, and this one keeps reading what it knows.
const fileSchema = z.object({
  version: z.literal(1),
  owners: z.record(z.string(), z.array(itemSchema)),
})
type ListFile = z.output<typeof fileSchema>

const EMPTY: ListFile = { version: 1, owners: {} }

function itemOf(created: Created): CallbackSecretItem {
  return {
    id: created.id,
    label: created.label,
    fingerprint: created.fingerprint,
    createdAt: created.created_at,
  }
}

/**
 * The callback secrets made in Atelier, by owner. Changes are made one at a time (read, change,
 * write whole and rename), so two quick creates in one app both stay listed.
 */
export class CallbackSecretList {
  readonly file: string
  #queue: Promise<unknown> = Promise.resolve()

  constructor(home: string) {
    this.file = join(home, CALLBACK_SECRETS_FILE)
  }

  async list(owner: string): Promise<CallbackSecretItem[]> {
    return structuredClone((await this.#read()).owners[owner] ?? [])
  }

  /** Throws SETTINGS_FILE_DAMAGED when the file cannot be read; nothing else. */
  async check(): Promise<void> {
    await this.#read()
  }

  add(owner: string, item: CallbackSecretItem): Promise<void> {
    return this.#change((file) => {
      const others = (file.owners[owner] ?? []).filter((listed) => listed.id !== item.id)
      const items = [item, ...others].sort((a, b) => b.createdAt.localeCompare(a.createdAt))
      return { ...file, owners: { ...file.owners, [owner]: items } }
    })
  }

  /** True when it was listed. */
  async remove(owner: string, id: string): Promise<boolean> {
    let found = false
    await this.#change((file) => {
      const items = file.owners[owner] ?? []
      found = items.some((listed) => listed.id === id)
      if (!found) return null
      const left = items.filter((listed) => listed.id !== id)
      const owners = Object.fromEntries(
        Object.entries(file.owners).flatMap(([key, listed]) => {
          if (key !== owner) return [[key, listed]]
          return left.length > 0 ? [[key, left]] : []
        }),
      )
      return { ...file, owners }
    })
    return found
  }

  /** After a reset of the local sandbox: its organizations, and their secrets, are gone. */
  forgetSandboxes(): Promise<void> {
    return this.#change((file) => {
      const owners = Object.entries(file.owners).filter(([owner]) => {
        return !owner.startsWith(`${SANDBOX} `)
      })
      if (owners.length === Object.keys(file.owners).length) return null
      return { ...file, owners: Object.fromEntries(owners) }
    })
  }

  /** `change` answers the new content, or null to leave the file as it is. */
  #change(change: (file: ListFile) => ListFile | null): Promise<void> {
    const next = this.#queue.then(async () => {
      const changed = change(await this.#read())
      if (changed !== null) await this.#write(changed)
    })
    this.#queue = next.catch(() => undefined)
    return next
  }

  async #read(): Promise<ListFile> {
    const read = await readJsonFile(this.file)
    if (read.missing) return structuredClone(EMPTY)
    const parsed = fileSchema.safeParse(read.json)
    if (!parsed.success) {
      throw new SettingsError(
        'SETTINGS_FILE_DAMAGED',
        `The list of callback secrets ${this.file} cannot be read. Delete the file to start the list afresh: the secrets stay on the service, and their plain values were never kept.`,
      )
    }
    return parsed.data
  }

  /** Written whole to a temporary file, then renamed: a crash leaves the old file or the new one. */
  async #write(file: ListFile): Promise<void> {
    await writeJsonFile(this.file, file)
  }
}

/** The service makes the secret; its answer is the only place its plain value ever appears. */
export function createCallbackSecret(
  client: ServiceClient,
  label: string,
): Promise<CreatedCallbackSecret> {
  return online(
    'the callback secret was not created',
    'Callback secrets are made on the service',
    async () => {
      const created = await client.post('/v1/callback-secrets', { body: { label } })
      return { callbackSecret: itemOf(created), secret: created.plain_secret }
    },
  )
}
