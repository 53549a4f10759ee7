import { spawn, spawnSync, type ChildProcessWithoutNullStreams } from 'node:child_process'
import { accessSync, constants, mkdirSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { delimiter, join } from 'node:path'

const TOOLS = ['dbus-run-session', 'dbus-send', 'gnome-keyring-daemon', 'secret-tool'] as const

function onPath(tool: string): boolean {
  return (process.env.PATH ?? '').split(delimiter).some((folder) => {
    try {
      accessSync(join(folder, tool), constants.X_OK)
      return true
    } catch {
      return false
    }
  })
}

/**
 * Whether the keychain tests can run here. In CI they must: `.ci/run` installs D-Bus, GNOME
 * Keyring and secret-tool, and a missing one is a failure there, never a skip. Elsewhere they
 * skip, and say why.
 */
export function secretServiceAvailability(): { available: boolean; reason: string } {
  if (process.platform !== 'linux') {
    const reason = 'The keychain tests drive a Linux Secret Service, so they are skipped here.'
    if (process.env.CI) throw new Error(`${reason} In CI this is an error: CI runs on Linux.`)
    console.warn(`SKIPPED: ${reason}`)
    return { available: false, reason }
  }
  const missing = TOOLS.filter((tool) => !onPath(tool))
  if (missing.length === 0) return { available: true, reason: '' }
  const reason = `${missing.join(', ')} not found (apt-get install dbus dbus-x11 gnome-keyring libsecret-tools), so the keychain tests are skipped.`
  if (process.env.CI)
    throw new Error(`${reason} In CI this is an error: .ci/run must install them.`)
  console.warn(`SKIPPED: ${reason}`)
  return { available: false, reason }
}

/** A private D-Bus session with an unlocked GNOME Keyring in it: a real Secret Service. */
export interface SecretServiceSession {
  /**
   * The environment for child processes: the session bus, and HOME and XDG folders in a temp
   * folder, so that nothing reaches the keyrings of whoever runs the tests.
   */
  env: NodeJS.ProcessEnv
  /** The key stored for a profile, as `secret-tool lookup` finds it; null when none. */
  lookup: (account: string) => string | null
  /** Every account with an Atelier item, as `secret-tool search` lists them. */
  accounts: () => string[]
  close: () => Promise<void>
}

// The keyring runs in the foreground so that the shell can stop it; the shell lives as long
// as its stdin is open, so the whole session goes away with the test process even if that
// process dies without cleaning up. dbus-run-session stops the bus when the shell exits.
const SESSION_SCRIPT = `
printf %s "$1" | gnome-keyring-daemon --foreground --unlock --components=secrets >/dev/null 2>&1 &
keyring=$!
trap 'kill "$keyring" 2>/dev/null; wait "$keyring" 2>/dev/null' EXIT
printf 'bus=%s\\n' "$DBUS_SESSION_BUS_ADDRESS"
cat >/dev/null
`

function waitForLine(child: ChildProcessWithoutNullStreams, prefix: string): Promise<string> {
  return new Promise((resolve, reject) => {
    let out = ''
    let err = ''
    const timer = setTimeout(() => {
      done(new Error(`The D-Bus session did not start within 10 s. stderr: ${err}`))
    }, 10_000)
    const onOut = (chunk: Buffer) => {
      out += chunk.toString()
      // Only whole lines: the address may arrive in pieces.
      const line = out
        .split('\n')
        .slice(0, -1)
        .find((l) => l.startsWith(prefix))
      if (line !== undefined) done(undefined, line.slice(prefix.length))
    }
    const onErr = (chunk: Buffer) => {
      err += chunk.toString()
    }
    const onExit = (code: number | null) => {
      done(new Error(`The D-Bus session ended early (exit ${String(code)}). stderr: ${err}`))
    }
    function done(error: Error | undefined, value = '') {
      clearTimeout(timer)
      child.stdout.off('data', onOut)
      child.stderr.off('data', onErr)
      child.off('exit', onExit)
      if (error) reject(error)
      else resolve(value)
    }
    child.stdout.on('data', onOut)
    child.stderr.on('data', onErr)
    child.on('exit', onExit)
  })
}

async function waitFor(what: string, test: () => boolean, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (!test()) {
    if (Date.now() > deadline) throw new Error(`Timed out waiting for ${what}.`)
    await new Promise((done) => setTimeout(done, 100))
  }
}

/** Starts one session for a whole test file; close it in afterAll. */
export async function startSecretService(): Promise<SecretServiceSession> {
  const root = mkdtempSync(join(tmpdir(), 'atelier-keyring-'))
  const runtime = join(root, 'run')
  mkdirSync(runtime, { mode: 0o700 })
  const base: NodeJS.ProcessEnv = {
    ...process.env,
    HOME: root,
    XDG_RUNTIME_DIR: runtime,
    XDG_DATA_HOME: join(root, 'data'),
    XDG_CONFIG_HOME: join(root, 'config'),
    XDG_CACHE_HOME: join(root, 'cache'),
  }
  delete base.DBUS_SESSION_BUS_ADDRESS
  delete base.GNOME_KEYRING_CONTROL
  const child = spawn('dbus-run-session', ['--', 'sh', '-c', SESSION_SCRIPT, 'sh', 'test-pw'], {
    env: base,
    stdio: ['pipe', 'pipe', 'pipe'],
  })
  // dbus-daemon complains on stderr about fd limits in containers; nobody needs to read it.
  child.stderr.resume()
  const exited = new Promise<void>((done) => {
    child.once('exit', () => {
      done()
    })
  })
  const close = async () => {
    child.stdin.end()
    const stopped = await Promise.race([
      exited.then(() => true),
      new Promise<boolean>((done) =>
        setTimeout(() => {
          done(false)
        }, 5_000),
      ),
    ])
    if (!stopped) child.kill('SIGKILL')
    rmSync(root, { recursive: true, force: true })
  }

  try {
    const address = await waitForLine(child, 'bus=')
    const env: NodeJS.ProcessEnv = { ...base, DBUS_SESSION_BUS_ADDRESS: address }
    const run = (command: string, args: string[], input?: string) =>
      spawnSync(command, args, { env, encoding: 'utf8', timeout: 10_000, input })
    await waitFor('gnome-keyring-daemon on the session bus', () => {
      const owner = run('dbus-send', [
        '--session',
        '--print-reply',
        '--dest=org.freedesktop.DBus',
        '/org/freedesktop/DBus',
        'org.freedesktop.DBus.NameHasOwner',
        'string:org.freedesktop.secrets',
      ])
      return owner.stdout.includes('boolean true')
    })
    // Stores and clears an item: proves the login keyring is unlocked and will not prompt.
    const probe = ['atelier-test', 'probe']
    const stored = run('secret-tool', ['store', '--label=probe', ...probe], 'x')
    if (stored.status !== 0) throw new Error(`secret-tool store failed: ${stored.stderr}`)
    run('secret-tool', ['clear', ...probe])

    return {
      env,
      lookup: (account) => {
        const found = run('secret-tool', ['lookup', 'service', 'Atelier', 'username', account])
        return found.status === 0 ? found.stdout : null
      },
      accounts: () => {
        const found = run('secret-tool', ['search', '--all', 'service', 'Atelier'])
        const listing = `${found.stdout}\n${found.stderr}`
        return [...listing.matchAll(/^attribute\.username = (.*)$/gm)].map((m) => m[1] ?? '')
      },
      close,
    }
  } catch (error) {
    await close()
    throw error
  }
}
