import { Session } from 'node:inspector/promises'

/** The parts of V8's `.cpuprofile` format read here (the same as `node --cpu-prof` writes). */
export interface CpuProfile {
  nodes: {
    id: number
    callFrame: { functionName: string; url: string; lineNumber: number }
    children?: number[]
  }[]
  startTime: number
  endTime: number
  samples: number[]
  timeDeltas: number[]
}

export interface CpuProfiler {
  /** Ends the profile and returns it (write it out as JSON to open it in DevTools). */
  stop: () => Promise<CpuProfile>
}

/**
 * Profiles this thread from now until `stop`, like `--cpu-prof` but around just the part that
 * is measured (not the set-up before it). `intervalUs` is the sampling period.
 */
export async function startCpuProfile(intervalUs = 500): Promise<CpuProfiler> {
  const session = new Session()
  session.connect()
  await session.post('Profiler.enable')
  await session.post('Profiler.setSamplingInterval', { interval: intervalUs })
  await session.post('Profiler.start')
  return {
    stop: async () => {
      try {
        const { profile } = (await session.post('Profiler.stop')) as { profile: CpuProfile }
        return profile
      } finally {
        session.disconnect()
      }
    },
  }
}

export interface ProfileCost {
  name: string
  ms: number
  share: number
}

export interface ProfileSummary {
  totalMs: number
  /** Sampled while the thread waited for work. */
  idleMs: number
  /** Self time by function (name, file and line). */
  functions: ProfileCost[]
  /** Time with a frame of the place on the stack (counted once per sample), by place. */
  places: ProfileCost[]
}

/**
 * Self time per function, and inclusive time per place: a file under src-main, a package under
 * node_modules, or `node:` internals. Places say which of our modules the thread's time goes
 * through; functions say where it is finally spent.
 */
export function summarizeProfile(profile: CpuProfile, top = 20): ProfileSummary {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]))
  const parent = new Map<number, number>()
  for (const node of profile.nodes)
    for (const child of node.children ?? []) parent.set(child, node.id)
  const self = new Map<string, number>()
  const inclusive = new Map<string, number>()
  let totalUs = 0
  let idleUs = 0
  profile.samples.forEach((id, index) => {
    const us = profile.timeDeltas[index] ?? 0
    totalUs += us
    const node = byId.get(id)
    if (!node) return
    const { functionName, url, lineNumber } = node.callFrame
    if (functionName === '(idle)') {
      idleUs += us
      return
    }
    const fn = `${functionName || '(anonymous)'} ${url ? `${shortPlace(url)}:${lineNumber + 1}` : ''}`
    self.set(fn.trim(), (self.get(fn.trim()) ?? 0) + us)
    const seen = new Set<string>()
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
      const frame = byId.get(at)?.callFrame
      if (!frame) break
      const place = frame.url ? shortPlace(frame.url) : frame.functionName
      if (!place || seen.has(place) || place === '(root)') continue
      seen.add(place)
      inclusive.set(place, (inclusive.get(place) ?? 0) + us)
    }
  })
  const busyUs = Math.max(1, totalUs - idleUs)
  const ranked = (costs: Map<string, number>) =>
    [...costs]
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(([name, us]) => ({ name, ms: us / 1000, share: us / busyUs }))
  return {
    totalMs: totalUs / 1000,
    idleMs: idleUs / 1000,
    functions: ranked(self),
    places: ranked(inclusive),
  }
}

/** `src-main/sync/engine.ts`, `node_modules/undici`, `node:internal/...` as it is. */
function shortPlace(url: string): string {
  const path = decodeURIComponent(url.replace(/^file:\/\//, '')).replace(/\?.*$/, '')
  const modules = path.lastIndexOf('node_modules/')
  if (modules >= 0) {
    const [scope, name] = path.slice(modules + 13).split('/')
    return `node_modules/${scope?.startsWith('@') ? `${scope}/${name ?? ''}` : (scope ?? '')}`
  }
  for (const top of ['src-main/', 'src-shared/', 'test/']) {
    const at = path.lastIndexOf(top)
    if (at >= 0) return path.slice(at)
  }
  return path
}
