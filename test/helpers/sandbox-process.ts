import { spawn } from 'node:child_process'
import { join } from 'node:path'

export interface SandboxProcess {
  url: string
  orgId: string
  /** The admin key, read from the sandbox's ready line (a pipe), never from a file. */
  key: string
  pid: number
  /** SIGTERM, then resolves once the process has exited. */
  stop: () => Promise<void>
}

const root = join(import.meta.dirname, '..', '..')

/**
 * `atelier sandbox` in a process of its own, as the service is to the app: its request handling
 * and run timers then never share an event loop with what a benchmark measures. Ready when it
 * prints its JSON line; fails after `startTimeoutMs` or if it exits first.
 */
export async function startSandboxProcess(
  options: { dataDir?: string; latencyMs?: number; startTimeoutMs?: number } = {},
): Promise<SandboxProcess> {
  const args = [join(root, 'bin', 'atelier.mjs'), 'sandbox']
  if (options.dataDir !== undefined) args.push('--data', options.dataDir)
  args.push('--latency-ms', String(options.latencyMs ?? 0))
  const child = spawn(process.execPath, args, { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] })
  let errors = ''
  child.stderr.on('data', (chunk: Buffer) => (errors += chunk.toString()))
  const exited = new Promise<void>((resolve) => {
    child.once('exit', () => {
      resolve()
    })
  })
  const line = await new Promise<string>((resolve, reject) => {
    let out = ''
    const timer = setTimeout(() => {
      child.kill('SIGKILL')
      reject(
        new Error(
          `The sandbox did not start within ${options.startTimeoutMs ?? 120_000} ms: ${errors}`,
        ),
      )
    }, options.startTimeoutMs ?? 120_000)
    child.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString()
      const newline = out.indexOf('\n')
      if (newline >= 0) {
        clearTimeout(timer)
        resolve(out.slice(0, newline))
      }
    })
    child.once('exit', (code) => {
      clearTimeout(timer)
      reject(new Error(`The sandbox exited (${String(code)}) before it listened: ${errors}`))
    })
  })
  const ready = JSON.parse(line) as { url: string; orgId: string; keys: { admin: string } }
  return {
    url: ready.url,
    orgId: ready.orgId,
    key: ready.keys.admin,
    pid: child.pid ?? -1,
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM')
      await exited
    },
  }
}
