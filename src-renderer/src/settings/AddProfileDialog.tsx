import { useState } from 'react'
import { profileAddSchema, type ProfilesView } from '../../../src-shared/domain/settings'
import { Modal } from '../shell/Modal'
import { Field, ipcProblems, problemsOf, type FieldProblems } from './form'

/** Which field a refusal of main belongs under. */
const FIELD_OF_CODE: Record<string, string> = {
  INVALID_PROFILE_NAME: 'name',
  PROFILE_EXISTS: 'name',
  INVALID_BASE_URL: 'baseUrl',
  SERVICE_UNREACHABLE: 'baseUrl',
  INVALID_ORGANIZATION_ID: 'organizationId',
  KEY_FORBIDDEN: 'organizationId',
  INVALID_API_KEY: 'apiKey',
  KEY_REJECTED: 'apiKey',
}

/**
 * A new profile: the key is checked against the service, then kept in the system keychain. The
 * key field is masked and is emptied from memory with the dialog; main never sends it back.
 */
export function AddProfileDialog({
  onAdded,
  onClose,
}: {
  onAdded: (profiles: ProfilesView) => void
  onClose: () => void
}) {
  const [values, setValues] = useState({ name: '', baseUrl: '', organizationId: '', apiKey: '' })
  const [problems, setProblems] = useState<FieldProblems>({})
  const [problem, setProblem] = useState<string | null>(null)
  const [saving, setSaving] = useState(false)

  const edit = (field: keyof typeof values) => (event: { target: { value: string } }) => {
    setValues((v) => ({ ...v, [field]: event.target.value }))
    setProblems(({ [field]: _gone, ...rest }) => rest)
  }

  const save = async () => {
    const input = {
      name: values.name.trim(),
      baseUrl: values.baseUrl.trim(),
      apiKey: values.apiKey,
      ...(values.organizationId.trim() === ''
        ? {}
        : { organizationId: values.organizationId.trim() }),
    }
    const parsed = profileAddSchema.safeParse(input)
    if (!parsed.success) {
      setProblems(problemsOf(parsed.error.issues))
      return
    }
    const atelier = window.atelier
    if (!atelier) return
    setSaving(true)
    setProblem(null)
    const result = await atelier.profiles.add(input)
    setSaving(false)
    if (result.ok) {
      onAdded(result.value)
      return
    }
    const placed = ipcProblems(result.error, FIELD_OF_CODE)
    setProblems(placed)
    if (Object.keys(placed).length === 0) setProblem(result.error.message)
  }

  return (
    <Modal label="Add a profile" className="dialog wide settings-dialog" onClose={onClose}>
      <form
        noValidate
        onSubmit={(event) => {
          event.preventDefault()
          void save()
        }}
      >
        <h2>Add a profile</h2>
        <p className="muted">
          A profile is a service address and an API key. Atelier tests the key first, then keeps it
          in the system keychain, never in a file.
        </p>
        <Field label="Name" hint="How you will recognise it, e.g. studio." problem={problems.name}>
          {(props) => <input {...props} type="text" value={values.name} onChange={edit('name')} />}
        </Field>
        <Field label="Service address" problem={problems.baseUrl}>
          {(props) => (
            <input
              {...props}
              type="url"
              placeholder="https://api.example.com"
              value={values.baseUrl}
              onChange={edit('baseUrl')}
            />
          )}
        </Field>
        <Field
          label="Organization id (optional)"
          hint="Leave empty to use the key's own organization."
          problem={problems.organizationId}
        >
          {(props) => (
            <input
              {...props}
              type="text"
              value={values.organizationId}
              onChange={edit('organizationId')}
            />
          )}
        </Field>
        <Field label="API key" problem={problems.apiKey}>
          {(props) => (
            <input
              {...props}
              type="password"
              autoComplete="off"
              spellCheck={false}
              value={values.apiKey}
              onChange={edit('apiKey')}
            />
          )}
        </Field>
        {problem ? (
          <div className="banner error" role="alert">
            {problem}
          </div>
        ) : null}
        <div className="dialog-actions">
          <button type="button" className="small-button" onClick={onClose}>
            Cancel
          </button>
          <button type="submit" className="primary-button" disabled={saving}>
            {saving ? 'Testing the key…' : 'Test and save'}
          </button>
        </div>
      </form>
    </Modal>
  )
}
