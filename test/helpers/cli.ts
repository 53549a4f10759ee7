import { spawn } from 'node:child_process'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..')

export interface CliRun {
  code: number | null
  stdout: string
  stderr: string
}

export interface CliOptions {
  input?: string
  env?: NodeJS.ProcessEnv
  /** Runs the command through this program, e.g. a dbus-run-session of our own. */
  wrap?: string[]
  /** Killed after this long, so a hung command fails its test instead of the whole run. */
  timeoutMs?: number
}

/**
 * Runs the real `atelier` binary as a user would. Asynchronous on purpose: the sandbox answers
 * from the test's own process, so a synchronous spawn would leave the command waiting forever.
 */
export function runAtelier(args: readonly string[], options: CliOptions = {}): Promise<CliRun> {
  const { input = '', env, wrap = [], timeoutMs = 60_000 } = options
  const [command, ...rest] = [...wrap, process.execPath, join(root, 'bin', 'atelier.mjs'), ...args]
  return new Promise((resolve, reject) => {
    const child = spawn(command ?? process.execPath, rest, { cwd: root, env })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()))
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()))
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs)
    child.on('error', reject)
    child.on('close', (code) => {
      clearTimeout(timer)
      resolve({ code, stdout, stderr })
    })
    child.stdin.end(input)
  })
}
