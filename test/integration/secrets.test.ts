import { randomUUID } from 'node:crypto'
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { runAtelier, type CliOptions, type CliRun } from '../helpers/cli'
import {
  secretServiceAvailability,
  startSecretService,
  type SecretServiceSession,
} from '../helpers/keyring'
import { startTestSandbox, type TestSandbox } from '../helpers/sandbox'

const scratch = mkdtempSync(join(tmpdir(), 'atelier-secrets-'))
const tools = secretServiceAvailability()

function atelier(args: string[], options: CliOptions = {}): Promise<CliRun> {
  return runAtelier(args, { timeoutMs: 30_000, ...options })
}

function newHome(): string {
  return mkdtempSync(join(scratch, 'home-'))
}

function filesUnder(folder: string): string[] {
  return readdirSync(folder, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => join(entry.parentPath, entry.name))
}

/** A loopback port with nothing listening on it. */
async function closedPort(): Promise<number> {
  const server = createServer()
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done))
  const address = server.address()
  await new Promise<void>((done) =>
    server.close(() => {
      done()
    }),
  )
  if (address === null || typeof address === 'string') throw new Error('no port')
  return address.port
}

afterAll(() => {
  rmSync(scratch, { recursive: true, force: true })
})

// Every test spawns the real command several times; on a loaded machine that takes a while.
describe.skipIf(!tools.available)(
  'profiles and keys in a real Secret Service',
  { timeout: 90_000 },
  () => {
    let keyring: SecretServiceSession
    let sandbox: TestSandbox
    const cli = (home: string, args: string[], options: CliOptions = {}) =>
      atelier(['--home', home, ...args], { env: keyring.env, ...options })

    beforeAll(async () => {
      keyring = await startSecretService()
      sandbox = await startTestSandbox()
    })

    afterAll(async () => {
      await sandbox.close()
      await keyring.close()
    })

    it('adds, lists, uses, checks and removes profiles, with the keys only in the keychain', async () => {
      const home = newHome()
      const added = await cli(home, ['profile', 'add', 'work', '--base-url', `${sandbox.url}/`], {
        input: `${sandbox.keys.admin}\n`,
      })
      expect(added.stderr).toBe('')
      expect(added.code).toBe(0)
      expect(added.stdout).toContain('Added profile work')
      expect(added.stdout).toContain('It is the current profile.')
      expect(added.stdout).toMatch(/Balance: \S+ credits/)
      expect(keyring.lookup('work')).toBe(sandbox.keys.admin)

      const team = await cli(
        home,
        ['--json', 'profile', 'add', 'team', '--base-url', sandbox.url, '--org', sandbox.teamOrgId],
        { input: sandbox.keys.admin },
      )
      expect(team.code).toBe(0)
      expect(JSON.parse(team.stdout)).toMatchObject({
        profile: { name: 'team', base_url: sandbox.url, organization_id: sandbox.teamOrgId },
        current: false,
        balance: { org_id: sandbox.teamOrgId },
      })
      expect(keyring.accounts().sort()).toEqual(['team', 'work'])

      const listed = await cli(home, ['profile', 'list'])
      expect(listed.code).toBe(0)
      expect(listed.stdout).toMatch(/^\*\s+work\s+http:\/\/127\.0\.0\.1:\d+\s+\(the key's own\)$/m)
      expect(listed.stdout).toMatch(new RegExp(`^\\s+team\\s+\\S+\\s+${sandbox.teamOrgId}$`, 'm'))

      expect((await cli(home, ['profile', 'use', 'team'])).code).toBe(0)
      const json = await cli(home, ['--json', 'profile', 'list'])
      expect(JSON.parse(json.stdout)).toEqual({
        current: 'team',
        profiles: [
          expect.objectContaining({ name: 'work', base_url: sandbox.url, current: false }),
          expect.objectContaining({
            name: 'team',
            organization_id: sandbox.teamOrgId,
            current: true,
          }),
        ],
      })

      const checked = await cli(home, ['--json', 'profile', 'check'])
      expect(checked.code).toBe(0)
      expect(JSON.parse(checked.stdout)).toMatchObject({
        profile: { name: 'team' },
        balance: { org_id: sandbox.teamOrgId },
      })
      const named = await cli(home, ['--profile', 'work', '--json', 'profile', 'check'])
      expect(JSON.parse(named.stdout)).toMatchObject({ balance: { org_id: sandbox.orgId } })

      const removed = await cli(home, ['profile', 'remove', 'team'])
      expect(removed.code).toBe(0)
      expect(removed.stdout).toContain('deleted its key from the Secret Service')
      expect(removed.stdout).toContain('No profile is current now')
      expect(keyring.lookup('team')).toBeNull()
      expect(keyring.lookup('work')).toBe(sandbox.keys.admin)
      expect(JSON.parse((await cli(home, ['--json', 'profile', 'list'])).stdout)).toEqual({
        current: null,
        profiles: [expect.objectContaining({ name: 'work' })],
      })

      const last = await cli(home, ['--json', 'profile', 'remove', 'work'])
      expect(JSON.parse(last.stdout)).toEqual({ removed: 'work', key_deleted: true, current: null })
      expect(keyring.accounts()).toEqual([])
    })

    it('refuses a key the service rejects, in plain words, and saves nothing', async () => {
      const home = newHome()
      const wrong = await cli(home, ['profile', 'add', 'wrong', '--base-url', sandbox.url], {
        input: 'sk_sandbox_not-a-real-key\n',
      })
      expect(wrong.code).toBe(1)
      expect(wrong.stderr).toContain('rejected this key')
      expect(wrong.stderr).toContain('Nothing was saved.')
      expect(wrong.stderr).not.toContain('not-a-real-key')

      const json = await cli(
        home,
        ['--json', 'profile', 'add', 'wrong', '--base-url', sandbox.url],
        {
          input: 'sk_sandbox_not-a-real-key',
        },
      )
      expect(json.code).toBe(1)
      expect(JSON.parse(json.stdout)).toMatchObject({ error: { code: 'KEY_REJECTED' } })

      // A real key, but for an organization it does not belong to: the service's code, explained.
      const forbidden = await cli(
        home,
        ['--json', 'profile', 'add', 'other', '--base-url', sandbox.url, '--org', sandbox.orgId],
        { input: sandbox.keys.otherOrg },
      )
      expect(forbidden.code).toBe(1)
      const error = (JSON.parse(forbidden.stdout) as { error: { code: string; message: string } })
        .error
      expect(error.code).toBe('KEY_FORBIDDEN')
      expect(error.message).toContain('ORGANIZATION_MEMBERSHIP_REQUIRED')
      expect(error.message).toContain('not a member of the selected organization')

      const port = await closedPort()
      const unreachable = await cli(
        home,
        ['profile', 'add', 'gone', '--base-url', `http://127.0.0.1:${port}`],
        { input: sandbox.keys.admin },
      )
      expect(unreachable.code).toBe(1)
      expect(unreachable.stderr).toContain(`Could not reach http://127.0.0.1:${port}`)

      expect(filesUnder(home)).toEqual([])
      expect(keyring.accounts()).toEqual([])
    })

    it('refuses bad input with exit code 2, before asking for anything', async () => {
      const home = newHome()
      const asArgument = await cli(home, [
        'profile',
        'add',
        'work',
        '--base-url',
        sandbox.url,
        `--api-key=${sandbox.keys.admin}`,
      ])
      expect(asArgument.code).toBe(2)
      expect(asArgument.stderr).toContain('read from stdin only')
      expect(asArgument.stderr).not.toContain(sandbox.keys.admin)

      const cases: [string[], string, string][] = [
        [['add', 'bad name', '--base-url', sandbox.url], 'x', 'INVALID_PROFILE_NAME'],
        [['add', 'work', '--base-url', 'ftp://example.com'], 'x', 'INVALID_BASE_URL'],
        [['add', 'work', '--base-url', 'https://u:p@example.com'], 'x', 'INVALID_BASE_URL'],
        [
          ['add', 'work', '--base-url', sandbox.url, '--org', 'acme'],
          'x',
          'INVALID_ORGANIZATION_ID',
        ],
        [['add', 'work', '--base-url', sandbox.url], '', 'INVALID_API_KEY'],
        [['add', 'work', '--base-url', sandbox.url], 'two\nlines\n', 'INVALID_API_KEY'],
        [['use', 'nobody'], '', 'PROFILE_NOT_FOUND'],
        [['remove', 'nobody'], '', 'PROFILE_NOT_FOUND'],
        [['check'], '', 'NO_PROFILE'],
      ]
      for (const [args, input, code] of cases) {
        const run = await cli(home, ['--json', 'profile', ...args], { input })
        expect({ args, code: run.code }).toEqual({ args, code: 2 })
        expect(JSON.parse(run.stdout)).toMatchObject({ error: { code } })
      }
      expect(filesUnder(home)).toEqual([])

      const first = await cli(home, ['profile', 'add', 'Work', '--base-url', sandbox.url], {
        input: sandbox.keys.limited,
      })
      expect(first.code).toBe(0)
      // Windows matches credential names without case, so these would share one key there.
      const again = await cli(
        home,
        ['--json', 'profile', 'add', 'work', '--base-url', sandbox.url],
        {
          input: sandbox.keys.admin,
        },
      )
      expect(again.code).toBe(2)
      expect(JSON.parse(again.stdout)).toMatchObject({ error: { code: 'PROFILE_EXISTS' } })
      expect(keyring.lookup('Work')).toBe(sandbox.keys.limited)
      expect((await cli(home, ['profile', 'remove', 'Work'])).code).toBe(0)
    })

    it('refuses to keep a key when no Secret Service answers, and writes nothing', async () => {
      const home = newHome()
      const nowhere = `unix:path=${join(scratch, 'no-bus-here')}`
      const withoutBus = { ...keyring.env }
      delete withoutBus.DBUS_SESSION_BUS_ADDRESS
      // A session bus that works but where no keyring is installed or activatable.
      const config = join(scratch, 'bus-without-keyring.conf')
      writeFileSync(
        config,
        `<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>session</type>
  <listen>unix:tmpdir=${tmpdir()}</listen>
  <auth>EXTERNAL</auth>
  <policy context="default">
    <allow send_destination="*" eavesdrop="true"/>
    <allow eavesdrop="true"/>
    <allow own="*"/>
  </policy>
</busconfig>
`,
      )
      const setups: [string, CliOptions][] = [
        [
          'a bus address that leads nowhere',
          { env: { ...keyring.env, DBUS_SESSION_BUS_ADDRESS: nowhere } },
        ],
        ['no session bus at all', { env: withoutBus }],
        [
          'a session bus without a keyring',
          { env: withoutBus, wrap: ['dbus-run-session', `--config-file=${config}`, '--'] },
        ],
      ]
      for (const [setup, options] of setups) {
        const run = await atelier(
          ['--home', home, '--json', 'profile', 'add', 'work', '--base-url', sandbox.url],
          { ...options, input: sandbox.keys.admin },
        )
        expect({ setup, code: run.code }).toEqual({ setup, code: 1 })
        const { error } = JSON.parse(run.stdout) as { error: { code: string; message: string } }
        expect(error.code).toBe('KEYCHAIN_UNAVAILABLE')
        expect(error.message).toContain('never in a file')
        expect(error.message).toContain('gnome-keyring')
        expect(error.message).toContain('dbus-run-session')
        expect(run.stdout + run.stderr).not.toContain(sandbox.keys.admin)
      }
      expect(existsSync(join(home, 'profiles.json'))).toBe(false)
      expect(filesUnder(home)).toEqual([])
      expect(keyring.accounts()).toEqual([])
    })

    it('never writes a key under --home nor prints it, through a whole session', async () => {
      const home = newHome()
      const sentinel = sandbox.keys.admin
      const rejected = `sk_sentinel_${randomUUID()}`
      const runs: CliRun[] = []
      const step = async (args: string[], input = '', expected = 0) => {
        const run = await cli(home, args, { input })
        runs.push(run)
        expect({ args, code: run.code, stderr: run.stderr }).toMatchObject({ args, code: expected })
        return run
      }
      await step(['profile', 'add', 'decoy', '--base-url', sandbox.url], `${rejected}\n`, 1)
      await step(['profile', 'add', 'main', '--base-url', sandbox.url], `${sentinel}\n`)
      await step(
        ['--json', 'profile', 'add', 'team', '--base-url', sandbox.url, '--org', sandbox.teamOrgId],
        sentinel,
      )
      await step(['profile', 'list'])
      await step(['--json', 'profile', 'list'])
      await step(['profile', 'use', 'team'])
      await step(['profile', 'check'])
      await step(['--json', 'profile', 'check', 'main'])
      await step(['profile', 'remove', 'team'])
      // Sync, a run and logs at debug level, with the same kind of scan: sentinel.test.ts.
      expect(keyring.lookup('main')).toBe(sentinel)

      const files = filesUnder(home)
      expect(files.map((file) => file.slice(home.length + 1))).toContain('profiles.json')
      for (const secret of [sentinel, rejected]) {
        const needles = [Buffer.from(secret, 'utf8'), Buffer.from(secret, 'utf16le')]
        for (const file of files) {
          const bytes = readFileSync(file)
          for (const needle of needles)
            expect({ file, found: bytes.includes(needle) }).toEqual({ file, found: false })
        }
        for (const run of runs) {
          expect(run.stdout).not.toContain(secret)
          expect(run.stderr).not.toContain(secret)
        }
      }
      await step(['profile', 'remove', 'main'])
      expect(keyring.accounts()).toEqual([])
    })
  },
)
