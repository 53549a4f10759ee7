import { spawnSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'

const root = join(import.meta.dirname, '..', '..')
const home = mkdtempSync(join(tmpdir(), 'atelier-cli-'))
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version: string }

/** Runs the real `atelier` binary as a user would, through Node and the bin script. */
function atelier(...args: string[]) {
  const result = spawnSync(process.execPath, [join(root, 'bin', 'atelier.mjs'), ...args], {
    cwd: root,
    encoding: 'utf8',
    timeout: 30_000,
  })
  return { code: result.status, stdout: result.stdout, stderr: result.stderr }
}

afterAll(() => {
  rmSync(home, { recursive: true, force: true })
})

describe('the atelier command', () => {
  it('prints help with the global flags and exit codes', () => {
    const { code, stdout } = atelier('--help')
    expect(code).toBe(0)
    for (const flag of ['--home', '--profile', '--json', 'version']) expect(stdout).toContain(flag)
    expect(stdout).toContain('Exit codes: 0 success, 1 the work failed, 2 bad usage or input.')
  })

  it('prints its version for people and for scripts', () => {
    const people = atelier('--home', home, 'version')
    expect(people.code).toBe(0)
    expect(people.stdout).toMatch(new RegExp(`^Atelier ${pkg.version.replaceAll('.', '\\.')} `))

    const scripts = atelier('--json', 'version')
    expect(scripts.code).toBe(0)
    expect(JSON.parse(scripts.stdout)).toMatchObject({ name: 'atelier', version: pkg.version })
  })

  it('exits 2 with a plain message on bad usage', () => {
    const unknown = atelier('frobnicate')
    expect(unknown.code).toBe(2)
    expect(unknown.stderr).toContain("unknown command 'frobnicate'")
    expect(unknown.stderr).toContain('atelier --help')

    const missing = atelier('--home')
    expect(missing.code).toBe(2)
    expect(missing.stderr).toContain('--home')

    const json = atelier('--json', 'frobnicate')
    expect(json.code).toBe(2)
    expect(JSON.parse(json.stdout)).toMatchObject({ error: { code: 'USAGE' } })
  })
})
