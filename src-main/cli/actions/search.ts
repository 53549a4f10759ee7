import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { MIRROR_FILE, openDatabases, type Mirror } from '../../db'
import { isSecretsError, readProfiles } from '../../secrets'
import { isSearchError, MirrorSearch, syncedOrganizations, syncedProfiles } from '../../search'
import type {
  SearchQueryInput,
  SearchResult,
  SearchResultItem,
  SearchSnippet,
} from '../../../src-shared/domain/search'
import { EXIT } from '../exit-codes'
import type { CommandContext } from '../context'
import { CliError } from '../errors'

const usage = (message: string, code = 'USAGE') => new CliError(message, EXIT.usage, code)

const nothingSynced = (profile: string | null) =>
  new CliError(
    `Nothing synced yet${profile === null ? '' : ` for profile ${profile}`}; run \`atelier sync\` first, then search again.`,
    EXIT.failed,
    'NOTHING_SYNCED',
  )

/**
 * The profile whose synced records are searched (named, current, or the only one the mirror
 * holds) and its organization, from the mirror's sync cursors: no keychain, no service.
 */
async function organizationOf(home: string, named: string | undefined, mirror: Mirror) {
  let name = named ?? null
  let organization: string | null = null
  try {
    const state = await readProfiles(home)
    name ??= state.current
    organization = state.profiles.find((p) => p.name === name)?.organization_id ?? null
  } catch (error) {
    if (!isSecretsError(error)) throw error
    throw new CliError(error.message, EXIT.failed, error.code)
  }
  if (name === null) {
    const synced = syncedProfiles(mirror)
    if (synced[0] === undefined) throw nothingSynced(null)
    if (synced.length > 1) {
      throw usage(
        `No profile is selected and the mirror holds several (${synced.join(', ')}). Pass --profile NAME.`,
        'NO_PROFILE',
      )
    }
    name = synced[0]
  }
  const synced = syncedOrganizations(mirror, name)
  // The profile's own organization when it names one; else the one synced last.
  const chosen = synced.find((s) => s.orgId === organization) ?? synced[0]
  return { profile: name, orgId: chosen?.orgId ?? null }
}

function highlighted(snippet: SearchSnippet, bold: boolean): string {
  const [open, close] = bold ? ['\u001b[1m', '\u001b[22m'] : ['[', ']']
  let text = ''
  let at = 0
  for (const [start, end] of snippet.highlights) {
    text += snippet.text.slice(at, start) + open + snippet.text.slice(start, end) + close
    at = end
  }
  return text + snippet.text.slice(at)
}

const cut = (text: string, width: number) =>
  text.length <= width ? text.padEnd(width) : `${text.slice(0, width - 1)}…`

function stateOf(item: SearchResultItem): string {
  if (item.kind === 'run') return item.status
  if (item.kind === 'evaluation') return item.verdict ?? item.status ?? ''
  return item.mediaType
}

function table(result: SearchResult, words: string, bold: boolean): string {
  if (result.items.length === 0) {
    return words === ''
      ? 'Nothing in the mirror passes these filters.'
      : `Nothing in the mirror matches "${words}".`
  }
  const lines = result.items.map((item) => {
    const date = item.createdAt.slice(0, 16).replace('T', ' ')
    const title =
      item.kind === 'asset' && item.folderPath ? `${item.folderPath}/${item.title}` : item.title
    const match =
      item.snippet === null ? '' : `  ${item.matchedIn ?? ''}: ${highlighted(item.snippet, bold)}`
    return `${cut(item.kind, 10)} ${date}  ${cut(stateOf(item), 9)}  ${cut(title, 40)}${match}`
  })
  const notes = [
    `${result.items.length} ${result.mode === 'ranked' ? 'best matches' : 'newest first'} (times in UTC).`,
  ]
  if (result.bounded) {
    notes.push('Only the newest matches were ranked: add a word or a filter to reach older ones.')
  }
  if (result.next !== null) notes.push(`Next page: add --cursor ${result.next}`)
  return [
    `${'KIND'.padEnd(10)} ${'CREATED'.padEnd(16)}  ${'STATE'.padEnd(9)}  TITLE`,
    ...lines,
    '',
    ...notes,
  ].join('\n')
}

/** `atelier search [WORDS...]`: the mirror searched, offline, for the profile's organization. */
export async function search(
  context: CommandContext,
  words: readonly string[],
  query: SearchQueryInput,
): Promise<void> {
  const globals = context.globals()
  if (!existsSync(join(globals.home, MIRROR_FILE))) throw nothingSynced(globals.profile ?? null)
  const dbs = openDatabases(globals.home)
  try {
    const { profile, orgId } = await organizationOf(globals.home, globals.profile, dbs.mirror)
    if (orgId === null) throw nothingSynced(profile)
    let result: SearchResult
    try {
      result = new MirrorSearch(dbs.mirror).search({ orgId }, query)
    } catch (error) {
      if (!isSearchError(error)) throw error
      throw new CliError(error.message, EXIT.usage, error.code)
    }
    const bold = process.stdout.isTTY && process.env.NO_COLOR === undefined
    context.print(result, table(result, words.join(' ').trim(), bold))
  } finally {
    dbs.close()
  }
}
