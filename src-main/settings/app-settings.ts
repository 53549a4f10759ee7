import { join } from 'node:path'
import {
  appSettingsSchema,
  DEFAULT_APP_SETTINGS,
  type AppSettings,
} from '../../src-shared/domain/settings'
import type { CoreSettings } from '../core'
import { SYNC_COLLECTIONS, type SyncCollection } from '../sync'
import { SettingsError } from './errors'
import { readJsonFile, writeJsonFile } from './json-file'

/** Beside the databases: `<home>/settings.json`, read whenever the core opens. */
export const SETTINGS_FILE = 'settings.json'

const MIB = 1024 * 1024

/** The defaults when there is no file yet; SETTINGS_FILE_DAMAGED when it cannot be read. */
export async function readAppSettings(home: string): Promise<AppSettings> {
  const file = join(home, SETTINGS_FILE)
  const read = await readJsonFile(file)
  if (read.missing) return structuredClone(DEFAULT_APP_SETTINGS)
  const { json } = read
  // A newer Atelier may add fields: what this one knows is kept, the defaults fill the rest.
  const merged =
    typeof json === 'object' && json !== null ? { ...DEFAULT_APP_SETTINGS, ...json } : json
  const parsed = appSettingsSchema.safeParse(merged)
  if (!parsed.success) {
    throw new SettingsError(
      'SETTINGS_FILE_DAMAGED',
      `The settings file ${file} cannot be read (${parsed.error.issues[0]?.message ?? 'not JSON'}). Save the settings again in Settings to replace it, or delete the file to go back to the defaults.`,
    )
  }
  return parsed.data
}

/** Written whole to a temporary file, then renamed: a crash leaves the old file or the new one. */
export async function writeAppSettings(home: string, settings: AppSettings): Promise<void> {
  await writeJsonFile(join(home, SETTINGS_FILE), settings)
}

/** The collections each switch stands for. */
const BY_SWITCH: Record<keyof AppSettings['mirror'], readonly SyncCollection[]> = {
  runs: ['runs', 'run-details'],
  evaluations: ['evaluations'],
  assets: ['asset-folders', 'assets'],
}
/**
 * Every other collection always goes (catalogs, models, flows, deletions, and one registered
 * in `sync/collections.ts` later, with no line here).
 */
const SWITCHED = new Set(Object.values(BY_SWITCH).flat())
const ALWAYS = SYNC_COLLECTIONS.filter((collection) => !SWITCHED.has(collection))

/** The settings in the core's terms. */
export function coreSettingsOf(settings: AppSettings): CoreSettings {
  const switched = (Object.keys(BY_SWITCH) as (keyof AppSettings['mirror'])[]).flatMap((name) =>
    settings.mirror[name] ? BY_SWITCH[name] : [],
  )
  return {
    intervalMs: settings.syncIntervalMinutes * 60_000,
    collections: [...ALWAYS, ...switched],
    mediaDownloads: settings.mediaDownloads,
    mediaCapBytes: settings.mediaCapMiB * MIB,
  }
}
