import { useEffect } from 'react'
import { useShallow } from 'zustand/react/shallow'
import {
  BalanceCard,
  CallbackSecretsCard,
  ProfilesCard,
  SandboxCard,
  StorageCard,
  SyncCard,
  WebhooksCard,
} from '../settings'
import '../settings/settings.css'
import { useAppStore, type ThemeChoice } from '../store'

const THEMES: { value: ThemeChoice; label: string }[] = [
  { value: 'system', label: 'Match the system' },
  { value: 'light', label: 'Light' },
  { value: 'dark', label: 'Dark' },
]

export function SettingsPage() {
  const { theme, setTheme, appInfo, loadSettings, loadAccount } = useAppStore(
    useShallow((s) => ({
      theme: s.theme,
      setTheme: s.setTheme,
      appInfo: s.appInfo,
      loadSettings: s.loadSettings,
      loadAccount: s.loadAccount,
    })),
  )

  useEffect(() => {
    void loadSettings()
    void loadAccount()
  }, [loadSettings, loadAccount])

  return (
    <div className="settings settings-page">
      <div className="settings-column">
        <ProfilesCard />
        <BalanceCard />
        <WebhooksCard />
        <CallbackSecretsCard />
        <SandboxCard />
      </div>
      <div className="settings-column">
        <section className="card">
          <h2>Appearance</h2>
          <fieldset className="segmented" aria-label="Theme">
            {THEMES.map(({ value, label }) => (
              <label key={value} className={theme === value ? 'checked' : undefined}>
                <input
                  type="radio"
                  name="theme"
                  value={value}
                  checked={theme === value}
                  onChange={() => {
                    setTheme(value)
                  }}
                />
                {label}
              </label>
            ))}
          </fieldset>
        </section>
        <SyncCard />
        <StorageCard />
        <section className="card">
          <h2>About</h2>
          <p className="muted">
            {appInfo
              ? `Atelier ${appInfo.version} (${appInfo.shell}, ${appInfo.platform})`
              : 'Atelier'}
          </p>
        </section>
      </div>
    </div>
  )
}
