/** The waits of the background sync, injectable so a test can move time on by hand. */
export interface Timers {
  setTimeout: (callback: () => void, ms: number) => unknown
  clearTimeout: (handle: unknown) => void
}

export const realTimers: Timers = {
  setTimeout: (callback, ms) => {
    const handle = setTimeout(callback, ms)
    // A sync planned for later must not keep a process alive that has nothing else to do.
    handle.unref()
    return handle
  },
  clearTimeout: (handle) => {
    clearTimeout(handle as NodeJS.Timeout)
  },
}
