import { useState } from 'react'
import { useShallow } from 'zustand/react/shallow'
import type { ProfileItem } from '../../../src-shared/domain/settings'
import { errorText } from '../shell/errorWords'
import { useAppStore } from '../store'
import { AddProfileDialog } from './AddProfileDialog'
import { ConfirmDialog } from './ConfirmDialog'

/** Who Atelier works as: the local sandbox or a profile; switching reopens the local data. */
export function ProfilesCard() {
  const { profiles, appInfo, settingsChanged, pushToast } = useAppStore(
    useShallow((s) => ({
      profiles: s.settingsProfiles,
      appInfo: s.appInfo,
      settingsChanged: s.settingsChanged,
      pushToast: s.pushToast,
    })),
  )
  const [adding, setAdding] = useState(false)
  const [removing, setRemoving] = useState<ProfileItem | null>(null)
  const [busy, setBusy] = useState<string | null>(null)
  const view = profiles.value
  const sandboxUrl = appInfo?.backend?.kind === 'sandbox' ? appInfo.backend.url : null

  const switchTo = async (name: string | null) => {
    const atelier = window.atelier
    if (!atelier) return
    setBusy(name ?? ':sandbox')
    const result = await atelier.profiles.switch({ name })
    setBusy(null)
    if (result.ok) {
      settingsChanged(result.value)
      pushToast({
        tone: 'success',
        title: name === null ? 'Using the local sandbox' : `Using profile ${name}`,
      })
    } else pushToast({ tone: 'error', title: 'Could not switch', message: errorText(result.error) })
  }

  const remove = async (name: string) => {
    const atelier = window.atelier
    if (!atelier) return
    setRemoving(null)
    const result = await atelier.profiles.remove({ name })
    if (result.ok) {
      settingsChanged(result.value)
      pushToast({
        tone: 'success',
        title: `Profile ${name} removed`,
        message: 'Its key was deleted from the keychain.',
      })
    } else pushToast({ tone: 'error', title: 'Not removed', message: result.error.message })
  }

  return (
    <section className="card" aria-labelledby="settings-profiles">
      <div className="card-head">
        <h2 id="settings-profiles">Profiles</h2>
        <button
          type="button"
          className="small-button"
          onClick={() => {
            setAdding(true)
          }}
        >
          Add profile…
        </button>
      </div>
      {profiles.problem ? <p className="field-problem">{profiles.problem}</p> : null}
      <ul className="settings-list" aria-label="Profiles">
        <li className={view?.inUse === null ? 'in-use' : undefined}>
          <div className="settings-row-text">
            <strong>Local sandbox</strong>
            <span className="muted">
              On this computer, no account and no cost{sandboxUrl ? ` · ${sandboxUrl}` : ''}
            </span>
          </div>
          {view?.inUse === null ? (
            <span className="settings-badge">In use</span>
          ) : (
            <button
              type="button"
              className="small-button"
              disabled={busy !== null}
              onClick={() => void switchTo(null)}
            >
              {busy === ':sandbox' ? 'Switching…' : 'Use'}
            </button>
          )}
        </li>
        {view?.profiles.map((profile) => (
          <li key={profile.name} className={profile.inUse ? 'in-use' : undefined}>
            <div className="settings-row-text">
              <strong>{profile.name}</strong>
              <span className="muted">
                {profile.baseUrl}
                {profile.organizationId
                  ? ` · organization ${profile.organizationId.slice(0, 8)}`
                  : ''}
              </span>
            </div>
            {profile.inUse ? (
              <span className="settings-badge">In use</span>
            ) : (
              <button
                type="button"
                className="small-button"
                disabled={busy !== null}
                onClick={() => void switchTo(profile.name)}
              >
                {busy === profile.name ? 'Switching…' : 'Use'}
              </button>
            )}
            <button
              type="button"
              className="small-button danger"
              aria-label={`Remove profile ${profile.name}`}
              disabled={profile.inUse || busy !== null}
              title={profile.inUse ? 'Switch to another profile first.' : undefined}
              onClick={() => {
                setRemoving(profile)
              }}
            >
              Remove
            </button>
          </li>
        ))}
      </ul>
      {adding ? (
        <AddProfileDialog
          onClose={() => {
            setAdding(false)
          }}
          onAdded={(next) => {
            setAdding(false)
            settingsChanged(next)
            pushToast({
              tone: 'success',
              title: 'Profile added',
              message: 'Its key is in the system keychain.',
            })
          }}
        />
      ) : null}
      {removing ? (
        <ConfirmDialog
          title={`Remove profile ${removing.name}?`}
          message="Its API key is deleted from the system keychain. Records already synced stay on this computer."
          confirmLabel="Remove profile"
          onCancel={() => {
            setRemoving(null)
          }}
          onConfirm={() => void remove(removing.name)}
        />
      ) : null}
    </section>
  )
}
