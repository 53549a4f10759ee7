// @vitest-environment happy-dom
import { act, fireEvent, render, screen, within } from '@testing-library/react'
import { createElement } from 'react'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import {
  DEFAULT_APP_SETTINGS,
  type AppSettings,
  type CallbackSecretItem,
  type ProfilesView,
  type SandboxStatus,
  type WebhookItem,
} from '../../src-shared/domain/settings'
import type { IpcChannel } from '../../src-shared/ipc/contract'
import type { IpcError, IpcResult } from '../../src-shared/ipc/result'
import { SettingsPage } from '../../src-renderer/src/shell/SettingsPage'
import { useAppStore } from '../../src-renderer/src/store'
import { settled, ShellMain, u } from './shell-transport'
import { installApi, removeApi } from './harness'

const ok = <T>(value: T): Promise<IpcResult<T>> => Promise.resolve({ ok: true, value })
const failed = (error: IpcError): Promise<IpcResult<never>> => Promise.resolve({ ok: false, error })

/**
 * What main answers for the Settings channels, kept in memory: only the transport is doubled;
 * the page, its forms, the shared schemas and the store are the app's own.
 */
class SettingsMain extends ShellMain {
  profiles: ProfilesView = { inUse: null, profiles: [] }
  webhooks: WebhookItem[] = []
  callbackSecrets: CallbackSecretItem[] = []
  /** What `callbackSecrets.create` answers instead of a secret, when set. */
  callbackSecretRefusal: IpcError | null = null
  /** What `webhooks.delete` answers instead of deleting, when set. */
  webhookDeleteRefusal: IpcError | null = null
  sandboxStatus: SandboxStatus = {
    running: true,
    inUse: true,
    url: 'http://127.0.0.1:4010',
    dataBytes: 3 * 1024 ** 2,
  }
  /** Each start of the sandbox listens on a new port, as a free one is picked. */
  private sandboxPort = 4010
  values: AppSettings = structuredClone(DEFAULT_APP_SETTINGS)
  /** The keys main accepts; any other is refused as the service would. */
  validKeys = new Set(['sk_live_good'])
  readonly settingsCalls: { channel: IpcChannel; args: unknown }[] = []

  callsOf(channel: IpcChannel): unknown[] {
    return this.settingsCalls.filter((c) => c.channel === channel).map((c) => c.args)
  }

  private note(channel: IpcChannel, args?: unknown) {
    this.settingsCalls.push({ channel, args })
  }

  constructor() {
    super()
    Object.assign(this.api, {
      profiles: {
        list: () => ok(structuredClone(this.profiles)),
        add: (args: { name: string; baseUrl: string; apiKey: string }) => {
          this.note('profiles.add', args)
          if (!this.validKeys.has(args.apiKey)) {
            return failed({
              code: 'KEY_REJECTED',
              message: `The service at ${args.baseUrl} rejected this key (UNAUTHORIZED): it is not a valid key there.`,
            })
          }
          this.profiles.profiles.push({
            name: args.name,
            baseUrl: args.baseUrl,
            organizationId: u(77),
            createdAt: '2025-01-01T00:00:00.000Z',
            inUse: false,
          })
          return ok(structuredClone(this.profiles))
        },
        switch: (args: { name: string | null }) => {
          this.note('profiles.switch', args)
          this.profiles.inUse = args.name
          for (const p of this.profiles.profiles) p.inUse = p.name === args.name
          return ok(structuredClone(this.profiles))
        },
        remove: (args: { name: string }) => {
          this.note('profiles.remove', args)
          this.profiles.profiles = this.profiles.profiles.filter((p) => p.name !== args.name)
          return ok(structuredClone(this.profiles))
        },
      },
      sandbox: {
        status: () => ok(structuredClone(this.sandboxStatus)),
        start: () => {
          this.note('sandbox.start')
          if (!this.sandboxStatus.running) {
            this.sandboxStatus = {
              ...this.sandboxStatus,
              running: true,
              url: `http://127.0.0.1:${String(++this.sandboxPort)}`,
            }
          }
          return ok(structuredClone(this.sandboxStatus))
        },
        stop: () => {
          this.note('sandbox.stop')
          // As main answers it (src-main/settings/service.ts): in use too, offline on purpose.
          this.sandboxStatus = { ...this.sandboxStatus, running: false, url: null }
          return ok(structuredClone(this.sandboxStatus))
        },
      },
      webhooks: {
        list: () => ok(structuredClone(this.webhooks)),
        create: (args: { url: string; events: string[] }) => {
          this.note('webhooks.create', args)
          const secret = 'whsec_abcdefghijklmnopqrstuvwxyz0123456789ABCD'
          const webhook: WebhookItem = {
            id: u(900),
            url: args.url,
            events: args.events,
            fingerprint: secret.slice(-4),
            active: true,
            createdAt: '2025-01-01T00:00:00.000Z',
          }
          this.webhooks.push(webhook)
          return ok({ webhook, secret })
        },
        delete: (args: { id: string }) => {
          this.note('webhooks.delete', args)
          if (this.webhookDeleteRefusal) return failed(this.webhookDeleteRefusal)
          this.webhooks = this.webhooks.filter((w) => w.id !== args.id)
          return ok(null)
        },
      },
      callbackSecrets: {
        list: () => ok(structuredClone(this.callbackSecrets)),
        create: (args: { label: string }) => {
          this.note('callbackSecrets.create', args)
          if (this.callbackSecretRefusal) return failed(this.callbackSecretRefusal)
          const secret = 'cbsec_zyxwvutsrqponmlkjihgfedcba9876543210WXYZ'
          const callbackSecret: CallbackSecretItem = {
            id: u(950 + this.callbackSecrets.length),
            label: args.label,
            fingerprint: secret.slice(-4),
            createdAt: '2025-03-04T10:20:00.000Z',
          }
          this.callbackSecrets.unshift(callbackSecret)
          return ok({ callbackSecret, secret })
        },
        remove: (args: { id: string }) => {
          this.note('callbackSecrets.remove', args)
          this.callbackSecrets = this.callbackSecrets.filter((s) => s.id !== args.id)
          return ok(null)
        },
      },
      settings: {
        get: () => ok(structuredClone(this.values)),
        set: (args: AppSettings) => {
          this.note('settings.set', args)
          this.values = structuredClone(args)
          return ok(structuredClone(args))
        },
        storage: () =>
          ok({
            mirrorBytes: 12 * 1024 ** 2,
            mediaBytes: 300 * 1024 ** 2,
            mediaCapBytes: 2 * 1024 ** 3,
            ledgerBytes: 80 * 1024,
            sandboxBytes: 3 * 1024 ** 2,
          }),
        rebuildMirror: () => failed({ code: 'UNAVAILABLE', message: 'Not part of these tests.' }),
      },
    })
  }
}

let main: SettingsMain

beforeEach(() => {
  main = new SettingsMain()
  installApi(main.api)
})

afterEach(() => {
  removeApi()
})

async function renderSettings() {
  render(createElement(SettingsPage))
  await act(async () => {})
}

function type(input: HTMLElement, value: string) {
  fireEvent.change(input, { target: { value } })
}

describe('the Settings section', () => {
  it('adds a profile: field messages first, the refusal under the key, then the list', async () => {
    await renderSettings()
    const profiles = within(screen.getByRole('list', { name: 'Profiles' }))
    expect(profiles.getByText('Local sandbox')).toBeTruthy()
    expect(profiles.getByText('In use')).toBeTruthy()

    fireEvent.click(screen.getByRole('button', { name: 'Add profile…' }))
    const dialog = within(screen.getByRole('dialog', { name: 'Add a profile' }))
    const key = dialog.getByLabelText('API key')
    expect(key.getAttribute('type')).toBe('password')

    // An empty form is checked here with the channel's own schema: nothing goes to main.
    await settled(() => {
      fireEvent.click(dialog.getByRole('button', { name: 'Test and save' }))
    })
    expect(main.callsOf('profiles.add')).toEqual([])
    expect(dialog.getByLabelText('Name').getAttribute('aria-invalid')).toBe('true')
    expect(dialog.getByText('Paste the API key.')).toBeTruthy()
    expect(dialog.getByText(/Give the service address/)).toBeTruthy()

    type(dialog.getByLabelText('Name'), 'studio')
    type(dialog.getByLabelText('Service address'), 'https://api.example.com')
    type(key, 'sk_live_wrong')
    await settled(() => {
      fireEvent.click(dialog.getByRole('button', { name: 'Test and save' }))
    })
    expect(main.callsOf('profiles.add')).toHaveLength(1)
    expect(key.getAttribute('aria-invalid')).toBe('true')
    expect(dialog.getByText(/rejected this key/)).toBeTruthy()

    type(key, 'sk_live_good')
    await settled(() => {
      fireEvent.click(dialog.getByRole('button', { name: 'Test and save' }))
    })
    expect(screen.queryByRole('dialog')).toBeNull()
    expect(profiles.getByText('studio')).toBeTruthy()
    expect(profiles.getByText(/https:\/\/api\.example\.com/)).toBeTruthy()
  })

  it('asks before removing a profile, and removes it only when confirmed', async () => {
    main.profiles.profiles.push({
      name: 'studio',
      baseUrl: 'https://api.example.com',
      organizationId: null,
      createdAt: '2025-01-01T00:00:00.000Z',
      inUse: false,
    })
    await renderSettings()
    fireEvent.click(screen.getByRole('button', { name: 'Remove profile studio' }))
    fireEvent.click(
      within(screen.getByRole('dialog', { name: 'Remove profile studio?' })).getByRole('button', {
        name: 'Cancel',
      }),
    )
    expect(main.callsOf('profiles.remove')).toEqual([])
    expect(screen.getByText('studio')).toBeTruthy()

    fireEvent.click(screen.getByRole('button', { name: 'Remove profile studio' }))
    await settled(() => {
      fireEvent.click(screen.getByRole('button', { name: 'Remove profile' }))
    })
    expect(main.callsOf('profiles.remove')).toEqual([{ name: 'studio' }])
    expect(screen.queryByText('studio')).toBeNull()
  })

  it('switches to a profile, and the one in use cannot be removed', async () => {
    main.profiles.profiles.push({
      name: 'studio',
      baseUrl: 'https://api.example.com',
      organizationId: null,
      createdAt: '2025-01-01T00:00:00.000Z',
      inUse: false,
    })
    await renderSettings()
    const row = screen.getByText('studio').closest('li')
    if (!row) throw new Error('no row')
    await settled(() => {
      fireEvent.click(within(row).getByRole('button', { name: 'Use' }))
    })
    expect(main.callsOf('profiles.switch')).toEqual([{ name: 'studio' }])
    expect(within(row).getByText('In use')).toBeTruthy()
    expect(
      screen.getByRole<HTMLButtonElement>('button', { name: 'Remove profile studio' }).disabled,
    ).toBe(true)
  })

  it('shows a new webhook secret once, with Copy, and never again', async () => {
    await renderSettings()
    expect(screen.getByText('No webhooks yet.')).toBeTruthy()
    type(screen.getByLabelText('New webhook address'), 'https://hooks.example.com/in')
    await settled(() => {
      fireEvent.click(screen.getByRole('button', { name: 'Create webhook' }))
    })
    expect(main.callsOf('webhooks.create')).toEqual([
      { url: 'https://hooks.example.com/in', events: ['run.completed', 'run.failed'] },
    ])
    const dialog = within(screen.getByRole('dialog', { name: "The webhook's signing secret" }))
    expect(dialog.getByTestId('webhook-secret').textContent).toBe(
      'whsec_abcdefghijklmnopqrstuvwxyz0123456789ABCD',
    )
    expect(dialog.getByText('it will not be shown again.')).toBeTruthy()
    expect(dialog.getByRole('button', { name: 'Copy' })).toBeTruthy()

    fireEvent.click(dialog.getByRole('button', { name: 'Done' }))
    expect(document.body.textContent).not.toContain('whsec_abcdefghijklmnopqrstuvwxyz')
    expect(screen.getByText(/secret …ABCD/)).toBeTruthy()
  })

  it('refuses a webhook without events before asking main', async () => {
    await renderSettings()
    type(screen.getByLabelText('New webhook address'), 'https://hooks.example.com/in')
    fireEvent.click(screen.getByLabelText('Run completed'))
    fireEvent.click(screen.getByLabelText('Run failed'))
    await settled(() => {
      fireEvent.click(screen.getByRole('button', { name: 'Create webhook' }))
    })
    expect(main.callsOf('webhooks.create')).toEqual([])
    expect(screen.getByText(/Pick at least one event/)).toBeTruthy()
  })

  it('shows a new callback secret once, with Copy, and never again', async () => {
    const writeText = vi.fn((_text: string) => Promise.resolve())
    Object.defineProperty(navigator, 'clipboard', { configurable: true, value: { writeText } })
    try {
      await renderSettings()
      expect(screen.getByText('No callback secrets made here yet.')).toBeTruthy()
      type(screen.getByLabelText('New callback secret name'), '  Render farm  ')
      await settled(() => {
        fireEvent.click(screen.getByRole('button', { name: 'Create callback secret' }))
      })
      // The shared schema trims the name before it goes.
      expect(main.callsOf('callbackSecrets.create')).toEqual([{ label: 'Render farm' }])
      const dialog = within(screen.getByRole('dialog', { name: 'The new callback secret' }))
      const plain = 'cbsec_zyxwvutsrqponmlkjihgfedcba9876543210WXYZ'
      expect(dialog.getByTestId('callback-secret').textContent).toBe(plain)
      expect(dialog.getByText('it will not be shown again.')).toBeTruthy()

      await settled(() => {
        fireEvent.click(dialog.getByRole('button', { name: 'Copy' }))
      })
      expect(writeText).toHaveBeenCalledWith(plain)
      expect(dialog.getByRole('button', { name: 'Copied' })).toBeTruthy()

      fireEvent.click(dialog.getByRole('button', { name: 'Done' }))
      expect(screen.queryByRole('dialog')).toBeNull()
      expect(document.body.textContent).not.toContain('cbsec_zyxwvutsrqponmlkjihgfedcba')
      const listed = within(screen.getByRole('list', { name: 'Callback secrets' }))
      expect(listed.getByText('Render farm')).toBeTruthy()
      expect(listed.getByText(/secret …WXYZ · made/)).toBeTruthy()
      expect(listed.getByText(/2025/).getAttribute('datetime')).toBe('2025-03-04T10:20:00.000Z')
      // Nor does the store keep it: only the dialog had it.
      expect(JSON.stringify(useAppStore.getState())).not.toContain(plain)
    } finally {
      Reflect.deleteProperty(navigator, 'clipboard')
    }
  })

  it('says how to copy by hand when the clipboard refuses', async () => {
    const writeText = vi.fn(() => Promise.reject(new Error('not allowed')))
    Object.defineProperty(navigator, 'clipboard', { configurable: true, value: { writeText } })
    try {
      await renderSettings()
      type(screen.getByLabelText('New callback secret name'), 'Render farm')
      await settled(() => {
        fireEvent.click(screen.getByRole('button', { name: 'Create callback secret' }))
      })
      const dialog = within(screen.getByRole('dialog', { name: 'The new callback secret' }))
      await settled(() => {
        fireEvent.click(dialog.getByRole('button', { name: 'Copy' }))
      })
      expect(dialog.getByRole('alert').textContent).toMatch(/copy it by hand/)
    } finally {
      Reflect.deleteProperty(navigator, 'clipboard')
    }
  })

  it('refuses a blank callback secret name before asking main, and says OFFLINE plainly', async () => {
    await renderSettings()
    const name = screen.getByLabelText('New callback secret name')
    type(name, '   ')
    await settled(() => {
      fireEvent.click(screen.getByRole('button', { name: 'Create callback secret' }))
    })
    expect(main.callsOf('callbackSecrets.create')).toEqual([])
    expect(name.getAttribute('aria-invalid')).toBe('true')
    expect(screen.getByText(/Give the secret a name you will recognise/)).toBeTruthy()

    main.callbackSecretRefusal = {
      code: 'OFFLINE',
      message: 'The service cannot be reached, so the callback secret was not created.',
    }
    type(name, 'Render farm')
    await settled(() => {
      fireEvent.click(screen.getByRole('button', { name: 'Create callback secret' }))
    })
    expect(main.callsOf('callbackSecrets.create')).toEqual([{ label: 'Render farm' }])
    expect(screen.queryByRole('dialog')).toBeNull()
    expect(useAppStore.getState().toasts).toEqual([
      expect.objectContaining({
        tone: 'error',
        title: 'Callback secret not created',
        message: expect.stringMatching(/^The service cannot be reached\. Check the internet/),
      }),
    ])
    // Nothing sends it again: the words ask the person to, and promise no retry.
    const [toast] = useAppStore.getState().toasts
    expect(toast?.message).toContain('then try again')
    expect(toast?.message).not.toContain('by itself')
  })

  it('asks before removing a callback secret, saying the service keeps it', async () => {
    main.callbackSecrets.push({
      id: u(960),
      label: 'Old receiver',
      fingerprint: 'Q7rS',
      createdAt: '2025-01-02T08:00:00.000Z',
    })
    await renderSettings()
    fireEvent.click(screen.getByRole('button', { name: 'Remove callback secret Old receiver' }))
    const confirm = within(screen.getByRole('dialog', { name: 'Remove this callback secret?' }))
    expect(confirm.getByText(/…Q7rS/).textContent).toMatch(/keeps it/)
    fireEvent.click(confirm.getByRole('button', { name: 'Cancel' }))
    expect(main.callsOf('callbackSecrets.remove')).toEqual([])
    expect(screen.getByText('Old receiver')).toBeTruthy()

    fireEvent.click(screen.getByRole('button', { name: 'Remove callback secret Old receiver' }))
    await settled(() => {
      fireEvent.click(screen.getByRole('button', { name: 'Remove secret' }))
    })
    expect(main.callsOf('callbackSecrets.remove')).toEqual([{ id: u(960) }])
    expect(screen.queryByText('Old receiver')).toBeNull()
    expect(screen.getByText('No callback secrets made here yet.')).toBeTruthy()
  })

  it('saves the sync settings, checked field by field', async () => {
    await renderSettings()
    const interval = screen.getByLabelText('Sync every (minutes)')
    type(interval, '0')
    await settled(() => {
      fireEvent.click(screen.getByRole('button', { name: 'Save' }))
    })
    expect(main.callsOf('settings.set')).toEqual([])
    expect(screen.getByText('At least 1 minute.')).toBeTruthy()

    type(interval, '15')
    fireEvent.click(screen.getByLabelText('Evaluations'))
    await settled(() => {
      fireEvent.click(screen.getByRole('button', { name: 'Save' }))
    })
    expect(main.callsOf('settings.set')).toEqual([
      {
        ...DEFAULT_APP_SETTINGS,
        syncIntervalMinutes: 15,
        mirror: { runs: true, evaluations: false, assets: true },
      },
    ])
    expect(screen.getByText(/300\.0 MB of 2\.0 GB/)).toBeTruthy()
  })
})

describe('the webhooks card', () => {
  const hook = (n: number, url: string): WebhookItem => ({
    id: u(910 + n),
    url,
    events: ['run.completed'],
    fingerprint: `k${String(n)}Zq`,
    active: true,
    createdAt: '2025-01-01T00:00:00.000Z',
  })

  it('asks before deleting a webhook, deletes it when confirmed and lists the rest', async () => {
    main.webhooks.push(hook(1, 'https://hooks.example.com/in'), hook(2, 'https://farm.example/cb'))
    await renderSettings()
    const listed = within(screen.getByRole('list', { name: 'Webhooks' }))
    fireEvent.click(
      listed.getByRole('button', { name: 'Delete webhook https://hooks.example.com/in' }),
    )
    const confirm = within(screen.getByRole('dialog', { name: 'Delete this webhook?' }))
    expect(
      confirm.getByText(/stops sending events to https:\/\/hooks\.example\.com\/in/),
    ).toBeTruthy()
    fireEvent.click(confirm.getByRole('button', { name: 'Cancel' }))
    expect(main.callsOf('webhooks.delete')).toEqual([])
    expect(screen.getByText('https://hooks.example.com/in')).toBeTruthy()

    fireEvent.click(
      listed.getByRole('button', { name: 'Delete webhook https://hooks.example.com/in' }),
    )
    await settled(() => {
      fireEvent.click(screen.getByRole('button', { name: 'Delete webhook' }))
    })
    expect(main.callsOf('webhooks.delete')).toEqual([{ id: u(911) }])
    expect(screen.queryByRole('dialog')).toBeNull()
    // The list is read again from main: only the other one is left.
    expect(screen.queryByText('https://hooks.example.com/in')).toBeNull()
    expect(screen.getByText('https://farm.example/cb')).toBeTruthy()
  })

  it('keeps a webhook it could not delete, and says so plainly', async () => {
    main.webhooks.push(hook(1, 'https://hooks.example.com/in'))
    main.webhookDeleteRefusal = {
      code: 'OFFLINE',
      message: 'The service cannot be reached, so the webhook was not deleted.',
    }
    await renderSettings()
    fireEvent.click(
      screen.getByRole('button', { name: 'Delete webhook https://hooks.example.com/in' }),
    )
    await settled(() => {
      fireEvent.click(screen.getByRole('button', { name: 'Delete webhook' }))
    })
    expect(main.callsOf('webhooks.delete')).toEqual([{ id: u(911) }])
    expect(screen.getByText('https://hooks.example.com/in')).toBeTruthy()
    expect(useAppStore.getState().toasts).toEqual([
      expect.objectContaining({
        tone: 'error',
        title: 'Webhook not deleted',
        message:
          'The service cannot be reached. Check the internet connection, then try again. What was synced stays available.',
      }),
    ])
  })
})

describe('the sandbox card', () => {
  it('stops the sandbox that runs beside a profile, and starts it again', async () => {
    main.sandboxStatus = { ...main.sandboxStatus, inUse: false }
    await renderSettings()
    const card = within(screen.getByRole('region', { name: 'Local sandbox' }))
    expect(card.getByTestId('sandbox-state').textContent).toBe('Running at http://127.0.0.1:4010')
    expect(card.getByText('3.0 MB')).toBeTruthy()

    await settled(() => {
      fireEvent.click(card.getByRole('button', { name: 'Stop' }))
    })
    expect(main.callsOf('sandbox.stop')).toHaveLength(1)
    expect(card.getByTestId('sandbox-state').textContent).toBe('Stopped')
    expect(card.queryByRole('button', { name: 'Stop' })).toBeNull()

    await settled(() => {
      fireEvent.click(card.getByRole('button', { name: 'Start' }))
    })
    expect(main.callsOf('sandbox.start')).toHaveLength(1)
    expect(card.getByTestId('sandbox-state').textContent).toBe('Running at http://127.0.0.1:4011')
    expect(card.getByRole('button', { name: 'Stop' })).toBeTruthy()
    expect(useAppStore.getState().toasts).toEqual([])
  })

  it('says "Stopping…" while main works, and offers nothing else meanwhile', async () => {
    main.sandboxStatus = { ...main.sandboxStatus, inUse: false }
    let answer: (value: IpcResult<SandboxStatus>) => void = () => undefined
    main.api.sandbox.stop = () =>
      new Promise((resolve) => {
        answer = resolve
      })
    await renderSettings()
    const card = within(screen.getByRole('region', { name: 'Local sandbox' }))
    await settled(() => {
      fireEvent.click(card.getByRole('button', { name: 'Stop' }))
    })
    const stopping = card.getByRole<HTMLButtonElement>('button', { name: 'Stopping…' })
    expect(stopping.disabled).toBe(true)
    expect(card.getByRole<HTMLButtonElement>('button', { name: 'Reset…' }).disabled).toBe(true)
    await act(async () => {
      answer({ ok: true, value: { ...main.sandboxStatus, running: false, url: null } })
      await Promise.resolve()
    })
    expect(card.getByTestId('sandbox-state').textContent).toBe('Stopped')
    expect(card.getByRole<HTMLButtonElement>('button', { name: 'Start' }).disabled).toBe(false)
  })

  it('stops the sandbox in use too, saying that Atelier then works offline', async () => {
    await renderSettings()
    const card = within(screen.getByRole('region', { name: 'Local sandbox' }))
    expect(card.getByTestId('sandbox-state').textContent).toBe(
      'Running, in use at http://127.0.0.1:4010',
    )
    const stop = card.getByRole<HTMLButtonElement>('button', { name: 'Stop' })
    expect(stop.disabled).toBe(false)
    expect(card.getByText(/Stopping it takes Atelier offline/)).toBeTruthy()

    await settled(() => {
      fireEvent.click(stop)
    })
    expect(main.callsOf('sandbox.stop')).toHaveLength(1)
    expect(card.getByTestId('sandbox-state').textContent).toBe('Stopped, so Atelier is offline')
    expect(useAppStore.getState().toasts).toEqual([])

    await settled(() => {
      fireEvent.click(card.getByRole('button', { name: 'Start' }))
    })
    expect(main.callsOf('sandbox.start')).toHaveLength(1)
    expect(card.getByTestId('sandbox-state').textContent).toBe(
      'Running, in use at http://127.0.0.1:4011',
    )
  })
})

describe('the balance card', () => {
  it('shows the credit left, and reads it again from main on Refresh', async () => {
    await renderSettings()
    const card = within(screen.getByRole('region', { name: 'Balance' }))
    expect(card.getByTestId('settings-balance').textContent).toBe('12.3457 credits')
    expect(card.getByText('Nordlys Studio · sandbox credit, not real money')).toBeTruthy()

    const asked = main.callsTo('account.summary').length
    main.account = {
      ok: true,
      value: {
        profileName: 'studio',
        organization: { id: u(78), name: null },
        balanceMicro: 250_000_000,
        backendKind: 'service',
      },
    }
    let release: () => void = () => undefined
    const held = new Promise<void>((resolve) => {
      release = resolve
    })
    const summary = main.api.account.summary
    main.api.account.summary = () => held.then(summary)
    await settled(() => {
      fireEvent.click(card.getByRole('button', { name: 'Refresh' }))
    })
    expect(card.getByRole<HTMLButtonElement>('button', { name: 'Refreshing…' }).disabled).toBe(true)
    await act(async () => {
      release()
      await held
      await Promise.resolve()
    })
    expect(main.callsTo('account.summary')).toHaveLength(asked + 1)
    expect(card.getByTestId('settings-balance').textContent).toBe('250.0000 credits')
    // A profile's organization, by id while its name is not known; real credit, no note.
    expect(card.getByText(u(78))).toBeTruthy()
    expect(card.queryByText(/sandbox credit/)).toBeNull()
    expect(card.getByRole<HTMLButtonElement>('button', { name: 'Refresh' }).disabled).toBe(false)
  })

  it('says the balance is unknown when the service cannot be reached', async () => {
    main.account = {
      ok: true,
      value: {
        profileName: null,
        organization: { id: u(77), name: 'Nordlys Studio' },
        balanceMicro: null,
        backendKind: 'sandbox',
      },
    }
    await renderSettings()
    expect(screen.getByTestId('settings-balance').textContent).toBe(
      'Unknown: the service cannot be reached',
    )
  })
})
