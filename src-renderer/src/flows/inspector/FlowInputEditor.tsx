import { useShallow } from 'zustand/react/shallow'
import { useAppStore } from '../../store'
import { removeFlowInput, updateFlowInput, type FileFlowInput } from '../document'
import { specOfFlowInput, ValueField } from '../inputs'
import { PORT_TYPES, typing } from './editing'
import { ProblemList } from './ProblemList'

export function FlowInputEditor({ input }: { input: FileFlowInput }) {
  const { readOnly, problems, editDoc } = useAppStore(
    useShallow((s) => ({
      readOnly: s.editor?.readOnly ?? true,
      problems: s.problems.byFlowInput.get(input.id),
      editDoc: s.editDoc,
    })),
  )
  return (
    <div className="flow-port" data-testid={`flow-input-${input.name}`}>
      <div className="flow-port-row">
        <input
          type="text"
          aria-label="Flow input name"
          value={input.name}
          disabled={readOnly}
          onChange={(event) => {
            const name = event.target.value
            editDoc((doc) => updateFlowInput(doc, input.id, { name }), typing(`fin-${input.id}`))
          }}
        />
        <select
          aria-label={`Type of ${input.name}`}
          value={input.variable_type_code}
          disabled={readOnly}
          onChange={(event) => {
            const type = event.target.value
            editDoc((doc) =>
              updateFlowInput(doc, input.id, { variable_type_code: type, default_value: null }),
            )
          }}
        >
          {[...new Set([input.variable_type_code, ...PORT_TYPES])].map((type) => (
            <option key={type}>{type}</option>
          ))}
        </select>
        <button
          type="button"
          className="link-button"
          aria-label={`Remove the flow input ${input.name}`}
          disabled={readOnly}
          onClick={() => {
            editDoc((doc) => removeFlowInput(doc, input.id))
          }}
        >
          Remove
        </button>
      </div>
      <label className="check-field">
        <input
          type="checkbox"
          checked={input.is_required ?? false}
          disabled={readOnly}
          onChange={(event) => {
            const required = event.target.checked
            editDoc((doc) => updateFlowInput(doc, input.id, { is_required: required }))
          }}
        />
        Required
      </label>
      <div className="flow-port-default">
        <span>Default, when a run leaves it empty</span>
        <ValueField
          spec={{
            ...specOfFlowInput(input),
            label: `Default of ${input.name}`,
            defaultValue: null,
          }}
          value={input.default_value ?? null}
          disabled={readOnly}
          onChange={(value) => {
            editDoc(
              (doc) => updateFlowInput(doc, input.id, { default_value: value }),
              typing(`fin-default-${input.id}`),
            )
          }}
        />
      </div>
      <ProblemList problems={problems} />
    </div>
  )
}
