import { startSandbox, type RunningSandbox, type SandboxOptions } from '../../src-main/sandbox'

export interface SandboxCall {
  status: number
  headers: Headers
  body: unknown
  text: string
}

export interface TestSandbox extends RunningSandbox {
  /** A raw HTTP call, for the tests that check status codes and envelopes themselves. */
  call: (
    method: string,
    path: string,
    options?: { key?: string | null; body?: unknown; headers?: Record<string, string> },
  ) => Promise<SandboxCall>
}

/** A real sandbox on 127.0.0.1, port 0, with its data in a temp folder removed at close. */
export async function startTestSandbox(options: SandboxOptions = {}): Promise<TestSandbox> {
  const sandbox = await startSandbox({ latencyMs: 20, checkResponses: true, ...options })
  const call: TestSandbox['call'] = async (method, path, { key, body, headers } = {}) => {
    const sent: Record<string, string> = { ...headers }
    if (key !== null) sent.Authorization = `Bearer ${key ?? sandbox.keys.admin}`
    if (body !== undefined) sent['Content-Type'] = 'application/json'
    const response = await fetch(`${sandbox.url}${path}`, {
      method,
      headers: sent,
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    })
    const text = await response.text()
    let parsed: unknown
    try {
      parsed = text ? JSON.parse(text) : undefined
    } catch {
      // Not JSON: the tests that expect this read `text`.
    }
    return { status: response.status, headers: response.headers, body: parsed, text }
  }
  return Object.assign(sandbox, { call })
}
