import { useEffect, useRef, useState } from 'react'
import type { FileFlowInput } from './document'
import { specOfFlowInput, ValueField } from './inputs'

export interface RunRequest {
  /** What the form says it starts: "Run the flow", "Run to here"… */
  title: string
  only?: string[]
  force?: string[]
}

/**
 * Asks for the flow's inputs before a run, each filled with what was last used or its default.
 * Empty fields are left out, so the flow input's own default applies.
 */
export function RunForm({
  request,
  inputs,
  remembered,
  onStart,
  onClose,
}: {
  request: RunRequest
  inputs: readonly FileFlowInput[]
  remembered: Readonly<Record<string, unknown>>
  onStart: (values: Record<string, unknown>) => void
  onClose: () => void
}) {
  const [values, setValues] = useState<Record<string, unknown>>(() =>
    Object.fromEntries(inputs.map((input) => [input.name, remembered[input.name] ?? null])),
  )
  const dialog = useRef<HTMLDialogElement>(null)
  useEffect(() => {
    const element = dialog.current
    if (element && !element.open) element.showModal()
    return () => {
      element?.close()
    }
  }, [])
  return (
    <dialog
      ref={dialog}
      className="run-form"
      aria-label={request.title}
      onCancel={(event) => {
        event.preventDefault()
        onClose()
      }}
    >
      <form
        method="dialog"
        onSubmit={(event) => {
          event.preventDefault()
          onStart(
            Object.fromEntries(
              Object.entries(values).filter(([, value]) => value !== null && value !== undefined),
            ),
          )
        }}
      >
        <h2>{request.title}</h2>
        {inputs.map((input) => (
          <div key={input.id} className="run-form-field" data-testid={`run-input-${input.name}`}>
            <span className="inspector-input-label">
              {input.display_name ?? input.name}
              {input.is_required ? <span aria-label="required"> *</span> : null}
            </span>
            {input.description ? <p className="muted">{input.description}</p> : null}
            <ValueField
              spec={specOfFlowInput(input)}
              value={values[input.name] ?? null}
              onChange={(value) => {
                setValues((current) => ({ ...current, [input.name]: value }))
              }}
            />
          </div>
        ))}
        <div className="run-form-actions">
          <button type="button" className="small-button" onClick={onClose}>
            Cancel
          </button>
          <button type="submit" className="primary-button" data-testid="run-start">
            Start the run
          </button>
        </div>
      </form>
    </dialog>
  )
}
