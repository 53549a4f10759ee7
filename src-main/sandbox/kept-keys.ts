import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { z } from 'zod'
import type { Accounts } from './accounts'

/** The sandbox's keys, by what they may do. */
export interface SandboxKeys {
  /** Every scope, in the main organization (and a member of the team organization). */
  admin: string
  /** Every scope but `evaluations:edit` (and sandbox control). */
  limited: string
  /** A key of a second, unrelated organization. */
  otherOrg: string
}

/** Kept beside `sandbox.db` in a sandbox's data folder. */
export const KEYS_FILE = 'keys.json'

const keysSchema = z.object({ admin: z.string(), limited: z.string(), otherOrg: z.string() })

/**
 * The keys of a sandbox that keeps its data in `dir` (`atelier sandbox --data DIR`, the app's
 * own sandbox): the ones written there at an earlier start while the database still accepts
 * them, else new ones from `mint`, written for the next start. A profile saved against the
 * sandbox then keeps working after a restart.
 *
 * These are the sandbox's own test keys for a local fake service with pretend credits, not a
 * person's secrets, so a plain file is enough; it is still readable by its owner only (0600), as
 * the database beside it holds everything they give access to anyway.
 */
export function keptKeys(dir: string, accounts: Accounts, mint: () => SandboxKeys): SandboxKeys {
  const file = join(dir, KEYS_FILE)
  const kept = readKeys(file)
  if (
    kept &&
    accounts.holdsKey('admin', kept.admin) &&
    accounts.holdsKey('limited', kept.limited) &&
    accounts.holdsKey('otherOrg', kept.otherOrg)
  ) {
    return kept
  }
  const keys = mint()
  writeFileSync(file, `${JSON.stringify(keys, null, 2)}\n`, { mode: 0o600 })
  return keys
}

/** The keys file as written; null when it is missing or not what was written (minted again). */
function readKeys(file: string): SandboxKeys | null {
  let text: string
  try {
    text = readFileSync(file, 'utf8')
  } catch {
    return null
  }
  try {
    const parsed = keysSchema.safeParse(JSON.parse(text))
    return parsed.success ? parsed.data : null
  } catch {
    return null
  }
}
