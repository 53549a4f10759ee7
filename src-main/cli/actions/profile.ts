import {
  isLoopbackUrl,
  isSecretsError,
  osKeychain,
  parseApiKey,
  parseProfileInput,
  Profiles,
  type Balance,
  type Profile,
} from '../../secrets'
import { EXIT } from '../exit-codes'
import type { CliIo } from '../io'
import type { CommandContext } from '../context'
import { CliError } from '../errors'

// Far more than any key; a bigger input is a wrong file piped in, not a key.
const STDIN_MAX_BYTES = 64 * 1024

/** SecretsError → CliError: bad input exits 2, everything else 1; the code goes to `--json`. */
function cliError(error: unknown, suffix = ''): unknown {
  if (!isSecretsError(error)) return error
  return new CliError(
    `${error.message}${suffix}`,
    error.isInputError ? EXIT.usage : EXIT.failed,
    error.code,
  )
}

async function readAll(stdin: NodeJS.ReadStream): Promise<string> {
  const chunks: Buffer[] = []
  let size = 0
  for await (const chunk of stdin) {
    const buffer = typeof chunk === 'string' ? Buffer.from(chunk) : (chunk as Buffer)
    size += buffer.length
    if (size > STDIN_MAX_BYTES) {
      throw new CliError(
        'stdin holds far more than an API key; pipe in just the key.',
        EXIT.usage,
        'INVALID_API_KEY',
      )
    }
    chunks.push(buffer)
  }
  return Buffer.concat(chunks).toString('utf8')
}

// A key typed at a terminal must not stay on the screen, so echo is off while it is typed.
function promptHidden(stdin: NodeJS.ReadStream, io: CliIo, prompt: string): Promise<string> {
  return new Promise((resolve, reject) => {
    let typed = ''
    const finish = (error?: CliError) => {
      stdin.off('data', onData)
      stdin.setRawMode(false)
      stdin.pause()
      io.stderr('\n')
      if (error) reject(error)
      else resolve(typed)
    }
    const onData = (chunk: string) => {
      for (const char of chunk) {
        if (char === '\r' || char === '\n' || char === '\u0004') {
          finish()
          return
        }
        if (char === '\u0003') {
          finish(new CliError('Canceled; nothing was saved.', EXIT.usage, 'CANCELLED'))
          return
        }
        typed = char === '\u007f' || char === '\b' ? typed.slice(0, -1) : typed + char
      }
    }
    io.stderr(prompt)
    stdin.setEncoding('utf8')
    stdin.setRawMode(true)
    stdin.on('data', onData)
    stdin.resume()
  })
}

/** The key comes from stdin only: argv ends up in shell history and in every process listing. */
async function readKey(io: CliIo, name: string): Promise<string> {
  const stdin = process.stdin
  const raw = stdin.isTTY
    ? await promptHidden(stdin, io, `API key for profile ${name} (typing is hidden): `)
    : await readAll(stdin)
  if (raw.trim() === '') {
    throw new CliError(
      `No API key on stdin. Pipe it in, e.g. \`atelier profile add ${name} --base-url URL < key.txt\`, or run the command in a terminal and type it when asked. Nothing was saved.`,
      EXIT.usage,
      'INVALID_API_KEY',
    )
  }
  try {
    return parseApiKey(raw)
  } catch (error) {
    throw cliError(error, ' Nothing was saved.')
  }
}

function describeOrganization(profile: Profile): string {
  return profile.organization_id ?? "the key's own organization"
}

function describeBalance(balance: Balance): string {
  return `${balance.balance} ${balance.currency_code} (organization ${balance.org_id})`
}

function table(rows: string[][]): string {
  const widths = rows[0]?.map((_, column) =>
    Math.max(...rows.map((row) => row[column]?.length ?? 0)),
  )
  return rows
    .map((row) =>
      row
        .map((cell, column) => cell.padEnd(widths?.[column] ?? 0))
        .join('  ')
        .trimEnd(),
    )
    .join('\n')
}

function profiles(context: CommandContext): Profiles {
  return new Profiles({ home: context.globals().home, keychain: osKeychain() })
}

/** `atelier profile add NAME`: the key read, checked against the service, then kept. */
export async function addProfile(
  context: CommandContext,
  name: string,
  flags: { baseUrl: string; org?: string },
): Promise<void> {
  const input = { name, baseUrl: flags.baseUrl, organizationId: flags.org }
  let fields: ReturnType<typeof parseProfileInput>
  try {
    // Checked before the key is asked for, so that a typo costs no pasting.
    fields = parseProfileInput(input)
  } catch (error) {
    throw cliError(error, ' Nothing was saved.')
  }
  const apiKey = await readKey(context.io, fields.name)
  if (!isLoopbackUrl(fields.base_url) && fields.base_url.startsWith('http:')) {
    context.io.stderr(
      `atelier: warning: ${fields.base_url} is plain http, so the key crosses the network unencrypted. Use https:// unless this service is on a network you trust.\n`,
    )
  }
  let added: Awaited<ReturnType<Profiles['add']>>
  try {
    added = await profiles(context).add(input, apiKey)
  } catch (error) {
    throw cliError(error, ' Nothing was saved.')
  }
  const keychain = osKeychain().storeName
  context.print(
    { profile: added.profile, current: added.current, balance: added.balance },
    [
      `Added profile ${added.profile.name}: ${added.profile.base_url}, ${describeOrganization(added.profile)}.`,
      `The key works and is in the ${keychain}. Balance: ${describeBalance(added.balance)}.`,
      added.current
        ? `It is the current profile.`
        : `To make it the current profile: atelier profile use ${added.profile.name}`,
    ].join('\n'),
  )
}

/** `atelier profile list`: the profiles and which one is current, never a key. */
export async function listProfiles(context: CommandContext): Promise<void> {
  let listing: Awaited<ReturnType<Profiles['list']>>
  try {
    listing = await profiles(context).list()
  } catch (error) {
    throw cliError(error)
  }
  const rows = listing.profiles.map((p) => ({ ...p, current: p.name === listing.current }))
  context.print(
    { current: listing.current, profiles: rows },
    rows.length === 0
      ? 'No profiles yet. Add one: atelier profile add NAME --base-url URL < key.txt'
      : table([
          ['', 'NAME', 'BASE URL', 'ORGANIZATION'],
          ...rows.map((p) => [
            p.current ? '*' : '',
            p.name,
            p.base_url,
            p.organization_id ?? "(the key's own)",
          ]),
        ]),
  )
}

/** `atelier profile use NAME`. */
export async function useProfile(context: CommandContext, name: string): Promise<void> {
  let chosen: Profile
  try {
    chosen = await profiles(context).use(name)
  } catch (error) {
    throw cliError(error)
  }
  context.print(
    { current: chosen.name, profile: chosen },
    `Now using profile ${chosen.name} (${chosen.base_url}).`,
  )
}

/** `atelier profile remove NAME`: the profile and its key in the keychain. */
export async function removeProfile(context: CommandContext, name: string): Promise<void> {
  let removed: Awaited<ReturnType<Profiles['remove']>>
  try {
    removed = await profiles(context).remove(name)
  } catch (error) {
    throw cliError(error)
  }
  const keychain = osKeychain().storeName
  context.print(
    {
      removed: removed.profile.name,
      key_deleted: removed.keyDeleted,
      current: removed.current,
    },
    [
      removed.keyDeleted
        ? `Removed profile ${removed.profile.name} and deleted its key from the ${keychain}.`
        : `Removed profile ${removed.profile.name}; the ${keychain} held no key for it any more.`,
      ...(removed.wasCurrent
        ? ['No profile is current now; pick one with: atelier profile use NAME']
        : []),
    ].join('\n'),
  )
}

/** `atelier profile check [NAME]`: the stored key against the service, and the balance. */
export async function checkProfile(
  context: CommandContext,
  name: string | undefined,
): Promise<void> {
  let checked: Awaited<ReturnType<Profiles['check']>>
  try {
    checked = await profiles(context).check(name ?? context.globals().profile)
  } catch (error) {
    throw cliError(error)
  }
  context.print(
    { profile: checked.profile, balance: checked.balance },
    `Profile ${checked.profile.name}: the key works. Balance: ${describeBalance(checked.balance)}.`,
  )
}
