import { randomBytes } from 'node:crypto'
import { readFile, rename, rm, writeFile } from 'node:fs/promises'

/**
 * A small JSON file of the home's (settings, the list of callback secrets): `missing` when there
 * is none yet, else its content parsed — undefined when it is not JSON, for the caller's schema
 * to refuse with its own words.
 */
export async function readJsonFile(
  file: string,
): Promise<{ missing: true } | { missing: false; json: unknown }> {
  let text: string
  try {
    text = await readFile(file, 'utf8')
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { missing: true }
    throw error
  }
  try {
    return { missing: false, json: JSON.parse(text) as unknown }
  } catch {
    return { missing: false, json: undefined }
  }
}

/** Written whole to a temporary file, then renamed: a crash leaves the old file or the new one. */
export async function writeJsonFile(file: string, value: unknown): Promise<void> {
  const temporary = `${file}.${randomBytes(4).toString('hex')}.tmp`
  try {
    await writeFile(temporary, `${JSON.stringify(value, null, 2)}\n`, { mode: 0o600 })
    await rename(temporary, file)
  } catch (error) {
    await rm(temporary, { force: true })
    throw error
  }
}
