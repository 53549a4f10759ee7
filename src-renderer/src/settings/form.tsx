import { useId, type ReactNode } from 'react'
import type { z } from 'zod'
import type { IpcError } from '../../../src-shared/ipc/result'

/** Problems by field, as the shared schema or the main process found them. */
export type FieldProblems = Record<string, string>

/** The first message per top-level field; the channel checks the same schema again. */
export function problemsOf(issues: readonly z.core.$ZodIssue[]): FieldProblems {
  const problems: FieldProblems = {}
  for (const issue of issues) {
    const field = String(issue.path[0] ?? '')
    problems[field] ??= issue.message
  }
  return problems
}

/** A refusal from main, placed under its field when it names one. */
export function ipcProblems(error: IpcError, byCode: Record<string, string> = {}): FieldProblems {
  const problems: FieldProblems = {}
  for (const issue of error.issues ?? []) {
    const field = issue.path.split('.')[0] ?? ''
    problems[field] ??= issue.message
  }
  const field = byCode[error.code]
  if (field !== undefined) problems[field] ??= error.message
  return problems
}

/** A labelled input with its hint and its problem under it, tied together for screen readers. */
export function Field({
  label,
  hint,
  problem,
  children,
}: {
  label: string
  hint?: string
  problem?: string | undefined
  children: (props: {
    id: string
    'aria-invalid': boolean
    'aria-describedby': string | undefined
  }) => ReactNode
}) {
  const id = useId()
  const describedBy = [hint ? `${id}-hint` : '', problem ? `${id}-problem` : '']
    .filter(Boolean)
    .join(' ')
  return (
    <div className="settings-field">
      <label htmlFor={id}>{label}</label>
      {children({
        id,
        'aria-invalid': problem !== undefined,
        'aria-describedby': describedBy || undefined,
      })}
      {hint ? (
        <p className="settings-hint" id={`${id}-hint`}>
          {hint}
        </p>
      ) : null}
      {problem ? (
        <p className="field-problem" id={`${id}-problem`} role="alert">
          {problem}
        </p>
      ) : null}
    </div>
  )
}

const UNITS = ['bytes', 'KB', 'MB', 'GB', 'TB'] as const

/** "1.4 GB": binary steps, one decimal past the first unit. */
export function bytesWords(bytes: number): string {
  let value = bytes
  let unit = 0
  while (value >= 1024 && unit < UNITS.length - 1) {
    value /= 1024
    unit++
  }
  return unit === 0 ? `${String(value)} bytes` : `${value.toFixed(1)} ${UNITS[unit] ?? ''}`
}
