import { useState } from 'react'
import { useShallow } from 'zustand/react/shallow'
import { appSettingsSchema, type AppSettings } from '../../../src-shared/domain/settings'
import { errorText } from '../shell/errorWords'
import { useAppStore } from '../store'
import { Field, ipcProblems, problemsOf, type FieldProblems } from './form'

const COLLECTIONS: { key: keyof AppSettings['mirror']; label: string }[] = [
  { key: 'runs', label: 'Runs, with their logs and deliveries' },
  { key: 'evaluations', label: 'Evaluations' },
  { key: 'assets', label: 'Assets and folders' },
]

/** The form, once the values are known: its own copy until saved. */
function SyncForm({ saved }: { saved: AppSettings }) {
  const { setSettingsValues, pushToast } = useAppStore(
    useShallow((s) => ({ setSettingsValues: s.setSettingsValues, pushToast: s.pushToast })),
  )
  const [draft, setDraft] = useState({
    ...saved,
    syncIntervalMinutes: String(saved.syncIntervalMinutes),
    mediaCapMiB: String(saved.mediaCapMiB),
  })
  const [problems, setProblems] = useState<FieldProblems>({})
  const [saving, setSaving] = useState(false)

  const save = async () => {
    const input = {
      ...draft,
      syncIntervalMinutes: Number(draft.syncIntervalMinutes),
      mediaCapMiB: Number(draft.mediaCapMiB),
    }
    const parsed = appSettingsSchema.safeParse(input)
    if (!parsed.success) {
      setProblems(problemsOf(parsed.error.issues))
      return
    }
    const atelier = window.atelier
    if (!atelier) return
    setSaving(true)
    const result = await atelier.settings.set(parsed.data)
    setSaving(false)
    if (result.ok) {
      setSettingsValues(result.value)
      pushToast({ tone: 'success', title: 'Settings saved', message: 'A sync with them started.' })
    } else {
      setProblems(ipcProblems(result.error))
      pushToast({ tone: 'error', title: 'Not saved', message: errorText(result.error) })
    }
  }

  return (
    <form
      noValidate
      onSubmit={(event) => {
        event.preventDefault()
        void save()
      }}
    >
      <Field
        label="Sync every (minutes)"
        hint="Atelier also syncs when it starts and when you ask."
        problem={problems.syncIntervalMinutes}
      >
        {(props) => (
          <input
            {...props}
            type="number"
            min={1}
            max={1440}
            className="settings-number"
            value={draft.syncIntervalMinutes}
            onChange={(event) => {
              setDraft((d) => ({ ...d, syncIntervalMinutes: event.target.value }))
            }}
          />
        )}
      </Field>
      <fieldset className="settings-checks" aria-label="What to keep on this computer">
        <legend>Keep on this computer</legend>
        {COLLECTIONS.map(({ key, label }) => (
          <label key={key} className="check-field">
            <input
              type="checkbox"
              checked={draft.mirror[key]}
              onChange={(event) => {
                const on = event.target.checked
                setDraft((d) => ({ ...d, mirror: { ...d.mirror, [key]: on } }))
              }}
            />
            {label}
          </label>
        ))}
        <label className="check-field">
          <input
            type="checkbox"
            checked={draft.mediaDownloads}
            onChange={(event) => {
              const on = event.target.checked
              setDraft((d) => ({ ...d, mediaDownloads: on }))
            }}
          />
          Download outputs and thumbnails for offline viewing
        </label>
      </fieldset>
      <Field
        label="Output store limit (MiB)"
        hint="Beyond it, the outputs used least recently are removed from this computer."
        problem={problems.mediaCapMiB}
      >
        {(props) => (
          <input
            {...props}
            type="number"
            min={100}
            className="settings-number"
            value={draft.mediaCapMiB}
            onChange={(event) => {
              setDraft((d) => ({ ...d, mediaCapMiB: event.target.value }))
            }}
          />
        )}
      </Field>
      <div>
        <button type="submit" className="primary-button" disabled={saving}>
          {saving ? 'Saving…' : 'Save'}
        </button>
      </div>
    </form>
  )
}

/** How often the mirror syncs and what it keeps. */
export function SyncCard() {
  const values = useAppStore((s) => s.settingsValues)
  return (
    <section className="card" aria-labelledby="settings-sync">
      <h2 id="settings-sync">Sync</h2>
      {values.problem ? <p className="field-problem">{values.problem}</p> : null}
      {/* Keyed by the saved values: a save or a reload starts the form from them. */}
      {values.value ? <SyncForm key={JSON.stringify(values.value)} saved={values.value} /> : null}
    </section>
  )
}
