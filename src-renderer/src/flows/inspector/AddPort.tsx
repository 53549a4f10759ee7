import { PORT_TYPES } from './editing'

export function AddPort({
  label,
  disabled,
  onAdd,
}: {
  label: string
  disabled: boolean
  onAdd: (type: string) => void
}) {
  return (
    <form
      className="add-port"
      onSubmit={(event) => {
        event.preventDefault()
        const type = new FormData(event.currentTarget).get('type')
        if (typeof type === 'string') onAdd(type)
      }}
    >
      <select name="type" aria-label={`${label}: type`} defaultValue="text" disabled={disabled}>
        {PORT_TYPES.map((type) => (
          <option key={type}>{type}</option>
        ))}
      </select>
      <button type="submit" className="small-button" disabled={disabled}>
        {label}
      </button>
    </form>
  )
}
