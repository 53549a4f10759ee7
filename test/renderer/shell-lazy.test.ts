// @vitest-environment happy-dom
import { act, cleanup, render, screen } from '@testing-library/react'
import { createElement, type ComponentType } from 'react'
import { afterEach, describe, expect, it } from 'vitest'
import { LazyBoundary, lazyScreen, Pending } from '../../src-renderer/src/shell/lazy'

/**
 * The screens that come in chunks of their own (shell/lazy.tsx): what shows while a chunk
 * loads, when it could not be loaded, and once it was fetched ahead.
 */

afterEach(() => {
  cleanup()
})

/** Runs `body` with React's report of the errors it caught (console.error) kept out of the log. */
async function quietly<T>(body: () => Promise<T> | T): Promise<T> {
  const error = console.error
  console.error = () => undefined
  try {
    return await body()
  } finally {
    console.error = error
  }
}

const Ready: ComponentType = () => createElement('p', null, 'The screen')

/** A chunk whose loading the test settles. */
function chunk() {
  const attempts: { resolve: (c: ComponentType) => void; reject: (e: Error) => void }[] = []
  const screenOf = lazyScreen(
    () =>
      new Promise<ComponentType>((resolve, reject) => {
        attempts.push({ resolve, reject })
      }),
  )
  return { screenOf, attempts }
}

function show(Component: ComponentType, key = 'a') {
  return createElement(LazyBoundary, {
    key,
    fallback: createElement(Pending),
    children: createElement(Component),
  })
}

describe('a lazy screen', () => {
  it('stands empty, then quietly says it is loading, until its chunk is there', async () => {
    const { screenOf, attempts } = chunk()
    render(show(screenOf.Component))
    expect(screen.getByText('Loading…').closest('[aria-busy="true"]')).not.toBeNull()
    expect(attempts).toHaveLength(1)
    await act(async () => {
      attempts[0]?.resolve(Ready)
      await Promise.resolve()
    })
    expect(await screen.findByText('The screen')).toBeTruthy()
    expect(screen.queryByText('Loading…')).toBeNull()
  })

  it('shows at once when its chunk was fetched ahead, and fetches it only once', async () => {
    const { screenOf, attempts } = chunk()
    screenOf.preload()
    screenOf.preload()
    expect(attempts).toHaveLength(1)
    await act(async () => {
      attempts[0]?.resolve(Ready)
      await Promise.resolve()
    })
    render(show(screenOf.Component))
    // No fallback first: the screen is there in the first render.
    expect(screen.getByText('The screen')).toBeTruthy()
    expect(screen.queryByText('Loading…')).toBeNull()
  })

  it('says when its chunk could not be loaded, offers a reload, and tries again when shown again', async () => {
    const { screenOf, attempts } = chunk()
    const { rerender } = render(show(screenOf.Component, 'first'))
    await quietly(() =>
      act(async () => {
        attempts[0]?.reject(new TypeError('Failed to fetch dynamically imported module'))
        await Promise.resolve()
      }),
    )
    const alert = await screen.findByRole('alert')
    expect(alert.textContent).toContain('This part of Atelier could not be loaded')
    expect(screen.getByRole('button', { name: 'Reload' })).toBeTruthy()

    // Shown again (another section and back): a new attempt, which succeeds.
    rerender(show(screenOf.Component, 'again'))
    expect(attempts).toHaveLength(2)
    await act(async () => {
      attempts[1]?.resolve(Ready)
      await Promise.resolve()
    })
    expect(await screen.findByText('The screen')).toBeTruthy()
    expect(screen.queryByRole('alert')).toBeNull()
  })

  it('leaves an error of the screen itself to the boundaries above it', async () => {
    const Broken: ComponentType = () => {
      throw new Error('a bug in the screen')
    }
    // React reports the error it rethrows; the test only cares that it goes on up.
    await quietly(() => {
      expect(() => render(show(Broken))).toThrow('a bug in the screen')
    })
  })
})
