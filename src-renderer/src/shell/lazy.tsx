import { Component, lazy, Suspense, useState, type ComponentType, type ReactNode } from 'react'

/**
 * The screens that are not the first one (the flow editor, and every section but Flows) come in
 * chunks of their own, fetched when first shown or earlier, when the browser is idle or the
 * pointer rests on what opens them. The start screen loads without them and their libraries.
 */

/** A chunk that did not load: the build changed under an open page, or the file is gone. */
export class ChunkLoadError extends Error {
  /** Lets the screen's next showing try again (called once the failure is on the screen). */
  readonly retry: () => void

  constructor(cause: unknown, retry: () => void) {
    super('A part of Atelier could not be loaded.', { cause })
    this.name = 'ChunkLoadError'
    this.retry = retry
  }
}

export interface LazyScreen {
  /** Renders the screen; suspends until its chunk is there (see `LazyBoundary`). */
  Component: ComponentType
  /** Starts fetching the chunk, once; a failed fetch is tried again on the next call. */
  preload: () => void
}

export function lazyScreen(load: () => Promise<ComponentType>): LazyScreen {
  let loaded: ComponentType | undefined
  let loading: Promise<ComponentType> | null = null
  // React keeps a lazy component's failure for good, so after one the screen gets a new one: once
  // the failure is shown (not before: React renders a suspended screen again before it shows
  // anything, and that render must see the failure, not start another fetch).
  const makeLazy = () => lazy(async () => ({ default: await get() }))
  const get = () => {
    loading ??= load().then(
      (component) => (loaded = component),
      (error: unknown) => {
        loading = null
        throw new ChunkLoadError(error, () => {
          Lazy = makeLazy()
        })
      },
    )
    return loading
  }
  let Lazy = makeLazy()
  function Screen() {
    // A chunk already fetched (ahead, on idle or hover) shows at once: React's lazy would still
    // suspend for a moment the first time. Chosen once per mount, as another type would remount.
    const [Shown] = useState<ComponentType>(() => loaded ?? Lazy)
    return <Shown />
  }
  return {
    Component: Screen,
    preload: () => {
      // A preload that fails says nothing: showing the screen tries again, and says it there.
      get().catch(() => undefined)
    },
  }
}

/**
 * Runs `task` once the browser has nothing better to do (within `timeoutMs` at the latest);
 * answers how to cancel it. Where there is no idle callback (Safari, the tests' DOM) it does
 * nothing: the chunk then comes on hover or when opened.
 */
export function whenIdle(task: () => void, timeoutMs = 3000): () => void {
  if (!('requestIdleCallback' in window)) return () => undefined
  const handle = window.requestIdleCallback(task, { timeout: timeoutMs })
  return () => {
    window.cancelIdleCallback(handle)
  }
}

/** Stands where a screen will be while its chunk loads: empty, then a quiet word if it lasts. */
export function Pending({ className = '' }: { className?: string }) {
  return (
    <div className={`screen-pending ${className}`.trim()} aria-busy="true">
      <p className="muted">Loading…</p>
    </div>
  )
}

interface BoundaryState {
  failed: Error | null
}

/** Says so when a chunk did not load, with a reload (what brings a changed build's files). */
class ChunkBoundary extends Component<{ children: ReactNode }, BoundaryState> {
  override state: BoundaryState = { failed: null }

  static getDerivedStateFromError(error: unknown): BoundaryState {
    return { failed: error instanceof Error ? error : new Error(String(error)) }
  }

  override componentDidCatch(error: unknown) {
    if (error instanceof ChunkLoadError) error.retry()
  }

  override render() {
    const { failed } = this.state
    if (failed === null) return this.props.children
    // Anything else is not this boundary's to explain: it goes on up, as it did before.
    if (!(failed instanceof ChunkLoadError)) throw failed
    return (
      <div className="banner error" role="alert">
        <span>This part of Atelier could not be loaded. Reload the window to try again.</span>
        <button
          type="button"
          className="link-button"
          onClick={() => {
            window.location.reload()
          }}
        >
          Reload
        </button>
      </div>
    )
  }
}

/** Where a lazy screen is shown: `fallback` while its chunk loads, a message if it cannot. */
export function LazyBoundary({ children, fallback }: { children: ReactNode; fallback: ReactNode }) {
  return (
    <ChunkBoundary>
      <Suspense fallback={fallback}>{children}</Suspense>
    </ChunkBoundary>
  )
}
