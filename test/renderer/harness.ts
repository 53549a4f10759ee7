import { cleanup } from '@testing-library/react'
import type { AtelierApi } from '../../src-shared/ipc'
import { useAppStore } from '../../src-renderer/src/store'

/** The size a window gives a scroll area; 20 rows of 40 px. */
export const VIEW = { clientHeight: 800, clientWidth: 1000 }

const measured = Object.keys(VIEW).map(
  (key) => [key, Object.getOwnPropertyDescriptor(Element.prototype, key)] as const,
)

/**
 * happy-dom lays nothing out, so every box measures 0 and a virtualized list would show no
 * rows: the scroll areas with one of these classes get the size of `VIEW`. Undo with
 * `unsizeScrollAreas` after each test.
 */
export function sizeScrollAreas(classNames: readonly string[]): void {
  for (const [key, original] of measured) {
    Object.defineProperty(HTMLElement.prototype, key, {
      configurable: true,
      get(this: HTMLElement) {
        if (classNames.some((name) => this.classList.contains(name))) {
          return VIEW[key as keyof typeof VIEW]
        }
        return (original?.get?.call(this) as number | undefined) ?? 0
      },
    })
  }
}

export function unsizeScrollAreas(): void {
  for (const [key] of measured) Reflect.deleteProperty(HTMLElement.prototype, key)
}

/** The page's `window.atelier` is the test's double, over a store as the app starts it. */
export function installApi(api: AtelierApi): void {
  window.atelier = api
  useAppStore.setState(useAppStore.getInitialState(), true)
}

/** Unmounts what the test drew and leaves no double and no state for the next one. */
export function removeApi(): void {
  cleanup()
  useAppStore.setState(useAppStore.getInitialState(), true)
  delete window.atelier
}
