// @vitest-environment happy-dom
import { act, render, screen, within } from '@testing-library/react'
import { createElement } from 'react'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { balanceWords } from '../../src-renderer/src/shell/AccountArea'
import { App } from '../../src-renderer/src/shell/App'
import { idle, settled, ShellMain, summary, SYNCING, u } from './shell-transport'
import { installApi, removeApi } from './harness'

let main: ShellMain

beforeEach(() => {
  localStorage.clear()
  main = new ShellMain()
  installApi(main.api)
})

afterEach(() => {
  removeApi()
})

async function renderApp() {
  render(createElement(App))
  await act(async () => {})
  return within(screen.getByRole('region', { name: 'Account' }))
}

describe('the account in the sidebar', () => {
  it('shows the organization, that there is no profile on the sandbox, and the balance', async () => {
    const account = await renderApp()
    expect(account.getByText('Nordlys Studio')).toBeTruthy()
    expect(account.getByText('No profile · local sandbox')).toBeTruthy()
    expect(account.getByTestId('balance').textContent).toBe('12.3457 credits')
    // The sync's status stays the navigation's one status: the account is not another.
    const nav = screen.getByRole('navigation', { name: 'Sections' })
    expect(within(nav).getAllByRole('status')).toHaveLength(1)
  })

  it('names the profile of the service, and the organization by its id until its name is known', async () => {
    main.account = {
      ok: true,
      value: {
        profileName: 'studio',
        organization: { id: u(78), name: null },
        balanceMicro: 0,
        backendKind: 'service',
      },
    }
    const account = await renderApp()
    expect(account.getByText('Profile studio')).toBeTruthy()
    expect(account.getByText(`Organization ${u(78).slice(0, 8)}`)).toBeTruthy()
    expect(account.getByTestId('balance').textContent).toBe('0.0000 credits')
  })

  it('reads the balance again when a sync ends, and says when it is unknown offline', async () => {
    const account = await renderApp()
    const asked = main.callsTo('account.summary').length
    main.account = {
      ok: true,
      value: {
        profileName: null,
        organization: { id: u(77), name: 'Nordlys Studio' },
        balanceMicro: 9_500_000,
        backendKind: 'sandbox',
      },
    }
    await settled(() => {
      main.emit('sync.status', SYNCING)
      main.emit('sync.status', idle(summary({ finishedAt: 2_000 })))
    })
    expect(main.callsTo('account.summary')).toHaveLength(asked + 1)
    expect(account.getByTestId('balance').textContent).toBe('9.5000 credits')

    main.account = {
      ok: true,
      value: {
        profileName: null,
        organization: { id: u(77), name: 'Nordlys Studio' },
        balanceMicro: null,
        backendKind: 'sandbox',
      },
    }
    await settled(() => {
      main.emit('sync.status', SYNCING)
      main.emit('sync.status', {
        ...idle(summary({ finishedAt: 3_000, outcome: 'offline', code: 'NETWORK_ERROR' })),
        state: 'offline',
      })
    })
    expect(account.getByTestId('balance').textContent).toBe('Balance unknown while offline')
  })

  it('writes micro-credits with four decimals, as the editor does', () => {
    expect(balanceWords(12_345_678)).toBe('12.3457 credits')
    expect(balanceWords(1_000_000_000)).toBe('1000.0000 credits')
    expect(balanceWords(50)).toBe('0.0001 credits')
  })
})
