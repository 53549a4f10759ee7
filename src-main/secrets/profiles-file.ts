import { randomBytes } from 'node:crypto'
import { mkdir, open, readFile, rename, rm } from 'node:fs/promises'
import { join } from 'node:path'
import { z } from 'zod'
import { SecretsError } from './errors'
import { profileSchema, type Profile } from './profile'

export const PROFILES_FILE = 'profiles.json'
const FORMAT_VERSION = 1

/** The whole profiles file: the profiles and which one commands use by default. */
export interface ProfilesState {
  current: string | null
  profiles: Profile[]
}

const fileSchema = z
  .object({
    version: z.literal(FORMAT_VERSION),
    current: z.string().nullable(),
    profiles: z.array(profileSchema),
  })
  .superRefine((file, context) => {
    const seen = new Set<string>()
    file.profiles.forEach((profile, index) => {
      const folded = profile.name.toLowerCase()
      if (seen.has(folded)) {
        context.addIssue({
          code: 'custom',
          path: ['profiles', index, 'name'],
          message: `repeats the profile name ${JSON.stringify(profile.name)}`,
        })
      }
      seen.add(folded)
    })
    if (file.current !== null && !file.profiles.some((p) => p.name === file.current)) {
      context.addIssue({
        code: 'custom',
        path: ['current'],
        message: `names no profile in the file (${JSON.stringify(file.current)})`,
      })
    }
  })

export function profilesFilePath(home: string): string {
  return join(home, PROFILES_FILE)
}

/** Reads the profiles under `home`; a missing file is no profiles yet, a damaged one an error. */
export async function readProfiles(home: string): Promise<ProfilesState> {
  const path = profilesFilePath(home)
  let text: string
  try {
    text = await readFile(path, 'utf8')
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { current: null, profiles: [] }
    throw error
  }
  const damaged = (why: string) =>
    new SecretsError(
      'PROFILES_FILE_DAMAGED',
      `The profiles file ${path} is damaged: ${why}. Repair it, or move it away and add the profiles again (their keys stay in the keychain and are replaced when you do).`,
    )
  let json: unknown
  try {
    json = JSON.parse(text)
  } catch {
    throw damaged('it is not valid JSON')
  }
  const version = (json as { version?: unknown } | null)?.version
  if (typeof version === 'number' && version > FORMAT_VERSION) {
    throw new SecretsError(
      'PROFILES_FILE_DAMAGED',
      `The profiles file ${path} was written by a newer Atelier (format ${version}); update Atelier to use it.`,
    )
  }
  const parsed = fileSchema.safeParse(json)
  if (!parsed.success) {
    const issues = parsed.error.issues
      .slice(0, 5)
      .map(
        (issue) => `${issue.path.length > 0 ? issue.path.join('.') : 'the file'} ${issue.message}`,
      )
    throw damaged(issues.join('; '))
  }
  return { current: parsed.data.current, profiles: parsed.data.profiles }
}

/**
 * Replaces the profiles file in one step: a crash leaves either the old file or the new one,
 * never half of each, because rename within a folder is atomic.
 */
export async function writeProfiles(home: string, state: ProfilesState): Promise<void> {
  await mkdir(home, { recursive: true, mode: 0o700 })
  const path = profilesFilePath(home)
  const temp = `${path}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`
  const body = `${JSON.stringify({ version: FORMAT_VERSION, ...state }, null, 2)}\n`
  try {
    const handle = await open(temp, 'wx', 0o600)
    try {
      await handle.writeFile(body, 'utf8')
      // Without this the rename can reach the disk before the data, and a power cut leaves
      // an empty file behind.
      await handle.sync()
    } finally {
      await handle.close()
    }
    await rename(temp, path)
  } catch (error) {
    await rm(temp, { force: true })
    throw error
  }
  await syncFolder(home)
}

// Makes the rename itself durable. Windows cannot open a folder for syncing, and the data is
// already safe in either file, so a failure here is not worth failing the command for.
async function syncFolder(folder: string): Promise<void> {
  try {
    const handle = await open(folder, 'r')
    try {
      await handle.sync()
    } finally {
      await handle.close()
    }
  } catch {
    // See above.
  }
}
