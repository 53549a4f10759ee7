import { useShallow } from 'zustand/react/shallow'
import { useAppStore, type ThemeChoice } from '../store'

const THEMES: { value: ThemeChoice; label: string }[] = [
  { value: 'system', label: 'Match the system' },
  { value: 'light', label: 'Light' },
  { value: 'dark', label: 'Dark' },
]

export function SettingsPage() {
  const { theme, setTheme, appInfo } = useAppStore(
    useShallow((s) => ({ theme: s.theme, setTheme: s.setTheme, appInfo: s.appInfo })),
  )
  return (
    <div className="settings">
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
      <section className="card">
        <h2>Profiles</h2>
        <p className="muted">
          {appInfo?.backend?.kind === 'sandbox'
            ? `No profile yet: Atelier is using its built-in local sandbox at ${appInfo.backend.url}. Everything you do there stays on this computer and costs nothing.`
            : 'No profile yet. Atelier uses its built-in local sandbox until you add one.'}
        </p>
      </section>
      <section className="card">
        <h2>About</h2>
        <p className="muted">
          {appInfo
            ? `Atelier ${appInfo.version} (${appInfo.shell}, ${appInfo.platform})`
            : 'Atelier'}
        </p>
      </section>
    </div>
  )
}
