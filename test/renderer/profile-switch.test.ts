// @vitest-environment happy-dom
import { describe, expect, it } from 'vitest'
import type { ProfilesView } from '../../src-shared/domain/settings'
import type { IpcResult } from '../../src-shared/ipc/result'
import { createAppStore } from '../../src-renderer/src/store'
import { ShellMain, storedFlow, u } from './shell-transport'

/**
 * A switch of profile in the window's store: what it held of the profile before goes at once
 * and the lists are read again from the one now in use. Only the transport is doubled.
 */

const view = (inUse: string | null): ProfilesView => ({
  inUse,
  profiles: ['alpha', 'beta'].map((name) => ({
    name,
    baseUrl: `https://${name}.example.com`,
    organizationId: u(name === 'alpha' ? 1 : 2),
    createdAt: '2026-01-01T00:00:00.000Z',
    inUse: inUse === name,
  })),
})

/** Main with alpha's flows; `useBeta` makes it answer as beta's service would. */
function mainOfTwoProfiles() {
  const main = new ShellMain([storedFlow(u(1001), 'Alpha portrait', 2_000)])
  let inUse: string | null = 'alpha'
  // The window's list holds whatever `flows.list` answered last: the double answers per profile.
  const ok = <T>(value: T): Promise<IpcResult<T>> => Promise.resolve({ ok: true, value })
  Object.assign(main.api, {
    profiles: {
      ...main.api.profiles,
      list: () => ok(view(inUse)),
    },
  })
  const useBeta = () => {
    inUse = 'beta'
    main.flows.clear()
    main.flows.set(u(2001), storedFlow(u(2001), 'Beta landscape', 3_000))
    return view(inUse)
  }
  return { main, useBeta }
}

describe('a switch of profile in the window', () => {
  it('drops the flow list at once and reads the new profile’s', async () => {
    const { main, useBeta } = mainOfTwoProfiles()
    const store = createAppStore(() => main.api)
    store.setState({ settingsProfiles: { value: view('alpha'), problem: null } })
    await store.getState().loadFlows()
    expect(store.getState().flows?.map((f) => f.name)).toEqual(['Alpha portrait'])
    const listsBefore = main.callsTo('flows.list').length

    store.getState().settingsChanged(useBeta())
    // Never alpha's rows under beta, not even while beta's are on their way.
    expect(store.getState().flows).toBeNull()
    await expect.poll(() => store.getState().flows?.map((f) => f.name)).toEqual(['Beta landscape'])
    expect(main.callsTo('flows.list')).toHaveLength(listsBefore + 1)
  })

  it('closes the flow open in the editor, which is the other profile’s', async () => {
    const { main, useBeta } = mainOfTwoProfiles()
    const store = createAppStore(() => main.api)
    store.setState({ settingsProfiles: { value: view('alpha'), problem: null } })
    expect(await store.getState().openFlow(u(1001))).toBe(true)
    expect(store.getState().editor?.id).toBe(u(1001))

    store.getState().settingsChanged(useBeta())
    await expect.poll(() => store.getState().editor).toBeNull()
  })

  it('keeps the lists when a profile is only added, not switched to', async () => {
    const { main } = mainOfTwoProfiles()
    const store = createAppStore(() => main.api)
    store.setState({ settingsProfiles: { value: view('alpha'), problem: null } })
    await store.getState().loadFlows()
    const listsBefore = main.callsTo('flows.list').length

    store.getState().settingsChanged(view('alpha'))
    expect(store.getState().flows?.map((f) => f.name)).toEqual(['Alpha portrait'])
    expect(main.callsTo('flows.list')).toHaveLength(listsBefore)
  })
})
