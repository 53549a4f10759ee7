import { useEffect, useId, useState } from 'react'
import type { AssetDetail } from '../../../../src-shared/domain/assets'
import { AssetPicker } from '../../components/AssetPicker'
import { MediaImage } from '../../components/MediaImage'
import { boundsOf, boundsWords, choicesOf, fieldKindOf, valueWords, type PortSpec } from './spec'

export interface FieldProps {
  spec: PortSpec
  /** The value set, or null for none (the default applies). */
  value: unknown
  /** Called with the new value, or null to clear it. */
  onChange: (value: unknown) => void
  disabled?: boolean
  /** What the check said is wrong with this input, if anything. */
  problem?: string | null
}

/** Text that follows the value when it changes from outside (an undo) and not while typing. */
function useEditedText(value: unknown, format: (value: unknown) => string) {
  const [text, setText] = useState(() => format(value))
  const [shown, setShown] = useState(value)
  if (!Object.is(shown, value)) {
    setShown(value)
    setText(format(value))
  }
  return [text, setText] as const
}

/** Under a field: what is wrong with what is typed, and what the flow check said. */
function Hint({
  id,
  problem,
  local,
}: {
  id: string
  problem?: string | null
  local?: string | null
}) {
  if (!problem && !local) return null
  return (
    <div id={id} className="field-hints">
      {local ? (
        <p className="field-problem" data-testid="field-hint">
          {local}
        </p>
      ) : null}
      {problem ? (
        <p className="field-problem" data-testid="problem-marker">
          {problem}
        </p>
      ) : null}
    </div>
  )
}

const placeholderOf = (spec: PortSpec) => {
  const fallback = valueWords(spec.defaultValue)
  return fallback === '' ? undefined : `Default: ${fallback}`
}

export function TextField({ spec, value, onChange, disabled, problem }: FieldProps) {
  const id = useId()
  const hintId = `${id}-hint`
  const { min, max } = boundsOf(spec)
  const text = typeof value === 'string' ? value : ''
  const common = {
    id,
    'aria-label': spec.label,
    'aria-invalid': problem ? true : undefined,
    'aria-describedby': problem ? hintId : undefined,
    value: text,
    disabled,
    placeholder: placeholderOf(spec),
    minLength: min,
    maxLength: max,
  }
  return (
    <>
      {fieldKindOf(spec) === 'textarea' ? (
        <textarea
          {...common}
          rows={4}
          onChange={(event) => {
            onChange(event.target.value === '' ? null : event.target.value)
          }}
        />
      ) : (
        <input
          {...common}
          type="text"
          onChange={(event) => {
            onChange(event.target.value === '' ? null : event.target.value)
          }}
        />
      )}
      <Hint id={hintId} problem={problem} />
    </>
  )
}

const numberText = (value: unknown) => (typeof value === 'number' ? String(value) : '')

/**
 * A number, with the range of its validator as the field's min and max. What is typed stays as
 * typed; a value out of range is still set (the check names it too) and the field says why.
 */
export function NumberField({ spec, value, onChange, disabled, problem }: FieldProps) {
  const id = useId()
  const hintId = `${id}-hint`
  const [text, setText] = useEditedText(value, numberText)
  const whole = fieldKindOf(spec) !== 'number'
  const bounds = boundsOf(spec)
  const floor = spec.variableType === 'seed' ? Math.max(0, bounds.min ?? 0) : bounds.min
  const range = { ...bounds, ...(floor !== undefined ? { min: floor } : {}) }
  const parsed = text.trim() === '' ? null : Number(text)
  let local: string | null = null
  if (parsed !== null && !Number.isFinite(parsed)) local = 'Enter a number.'
  else if (parsed !== null && whole && !Number.isInteger(parsed)) local = 'Enter a whole number.'
  else if (
    parsed !== null &&
    ((range.min !== undefined && parsed < range.min) ||
      (range.max !== undefined && parsed > range.max))
  ) {
    local = `Must be ${boundsWords(range) ?? ''}.`
  }
  return (
    <>
      <input
        id={id}
        type="number"
        aria-label={spec.label}
        aria-invalid={local || problem ? true : undefined}
        aria-describedby={local || problem ? hintId : undefined}
        value={text}
        min={range.min}
        max={range.max}
        step={whole ? 1 : 'any'}
        disabled={disabled}
        placeholder={placeholderOf(spec)}
        onChange={(event) => {
          const next = event.target.value
          setText(next)
          if (next.trim() === '') {
            onChange(null)
            return
          }
          const number = Number(next)
          if (Number.isFinite(number) && (!whole || Number.isInteger(number))) onChange(number)
        }}
      />
      <Hint id={hintId} problem={problem} local={local} />
    </>
  )
}

/** The largest seed the dice roll: what every runner takes as a 32-bit seed. */
export const MAX_SEED = 2 ** 31 - 1

/** A seed: a whole number of 0 or more, and a dice button that rolls a new one in range. */
export function SeedField(props: FieldProps & { random?: () => number }) {
  const { spec, onChange, disabled, random = Math.random } = props
  const bounds = boundsOf(spec)
  const low = Math.max(0, Math.ceil(bounds.min ?? 0))
  const high = Math.min(MAX_SEED, Math.floor(bounds.max ?? MAX_SEED))
  return (
    <div className="seed-field">
      <NumberField {...props} />
      <button
        type="button"
        className="small-button"
        aria-label={`Roll a random ${spec.label}`}
        title="Roll a random seed"
        disabled={disabled || high < low}
        onClick={() => {
          onChange(low + Math.floor(random() * (high - low + 1)))
        }}
      >
        ⚄
      </button>
    </div>
  )
}

export function BooleanField({ spec, value, onChange, disabled, problem }: FieldProps) {
  const id = useId()
  const checked = typeof value === 'boolean' ? value : spec.defaultValue === true
  return (
    <>
      <label className="check-field">
        <input
          id={id}
          type="checkbox"
          checked={checked}
          disabled={disabled}
          aria-invalid={problem ? true : undefined}
          onChange={(event) => {
            onChange(event.target.checked)
          }}
        />
        {value === null || value === undefined ? `${spec.label} (default)` : spec.label}
      </label>
      <Hint id={`${id}-hint`} problem={problem} />
    </>
  )
}

/** One of the validator's choices; the first option clears the value (the default applies). */
export function EnumField({ spec, value, onChange, disabled, problem }: FieldProps) {
  const id = useId()
  const choices = choicesOf(spec) ?? []
  const index = choices.findIndex((choice) => Object.is(choice, value))
  const fallback = valueWords(spec.defaultValue)
  return (
    <>
      <select
        id={id}
        aria-label={spec.label}
        aria-invalid={problem ? true : undefined}
        value={index >= 0 ? String(index) : ''}
        disabled={disabled}
        onChange={(event) => {
          const picked = event.target.value === '' ? null : choices[Number(event.target.value)]
          onChange(picked ?? null)
        }}
      >
        <option value="">{fallback === '' ? 'Choose…' : `Default (${fallback})`}</option>
        {choices.map((choice, i) => (
          <option key={`${typeof choice}-${String(choice)}`} value={String(i)}>
            {String(choice)}
          </option>
        ))}
      </select>
      <Hint id={`${id}-hint`} problem={problem} />
    </>
  )
}

/** A value that names an asset (its id) rather than a URL, a data: URL or a file's path. */
const ASSET_ID = /^[^\s:/\\]+$/

/** What the mirror knows of an asset named by id: undefined while it is read. */
function useMirrorAsset(id: string | null): AssetDetail | null | undefined {
  const [read, setRead] = useState<{ id: string; asset: AssetDetail | null } | null>(null)
  useEffect(() => {
    const api = window.atelier
    if (id === null || !api) return
    let current = true
    void api.assets.get({ id }).then((result) => {
      if (current) setRead({ id, asset: result.ok ? result.value : null })
    })
    return () => {
      current = false
    }
  }, [id])
  if (id === null) return null
  return read?.id === id ? read.asset : undefined
}

/** The chosen asset: its name and folder, and a picture of an image through the media store. */
function AssetPreview({ id, label, image }: { id: string; label: string; image: boolean }) {
  const asset = useMirrorAsset(id)
  if (asset === undefined) return null
  if (asset === null) {
    return <p className="muted field-note">No asset with this id in the mirror yet.</p>
  }
  return (
    <div className="field-asset">
      {image ? (
        <MediaImage
          className="field-preview"
          source={{ sha256: asset.sha256, ...(asset.url ? { url: asset.url } : {}) }}
          alt={`${label} preview`}
        />
      ) : null}
      <span className="muted">
        {asset.name} · {asset.folderPath ?? '/'}
      </span>
    </div>
  )
}

/**
 * An image or video: an asset chosen from the mirror (its id is the value), or a URL, a data:
 * URL or an asset id typed in. The preview never loads a remote address (the window's CSP
 * allows none): an asset's picture comes from the media store through MediaImage, a data: URL
 * shows as it is, and a web address is only fetched when the flow runs.
 */
export function MediaField({ spec, value, onChange, disabled, problem }: FieldProps) {
  const id = useId()
  const [picking, setPicking] = useState(false)
  const url = typeof value === 'string' ? value : ''
  const image = spec.variableType === 'image'
  const assetId = ASSET_ID.test(url) ? url : null
  const inline = image && /^(data:image\/|blob:)/.test(url)
  return (
    <>
      <div className="field-media">
        <input
          id={id}
          type="text"
          aria-label={`${spec.label} URL`}
          aria-invalid={problem ? true : undefined}
          placeholder="https://…, data:… or an asset id"
          value={url}
          disabled={disabled}
          onChange={(event) => {
            onChange(event.target.value.trim() === '' ? null : event.target.value.trim())
          }}
        />
        <button
          type="button"
          className="small-button"
          aria-expanded={picking}
          disabled={disabled}
          onClick={() => {
            setPicking(!picking)
          }}
        >
          Choose asset…
        </button>
      </div>
      {picking && !disabled ? (
        <AssetPicker
          chosen={assetId}
          mediaType={image ? 'image' : 'video'}
          autoFocus
          onChoose={(asset) => {
            onChange(asset.id)
            setPicking(false)
          }}
        />
      ) : null}
      {assetId !== null ? <AssetPreview id={assetId} label={spec.label} image={image} /> : null}
      {inline ? <img className="field-preview" src={url} alt={`${spec.label} preview`} /> : null}
      {/^https?:/i.test(url) ? (
        <p className="muted field-note">
          A web address is fetched when the flow runs; choose an asset to see it here.
        </p>
      ) : null}
      <Hint id={`${id}-hint`} problem={problem} />
    </>
  )
}

/** Anything else (lists, unknown types) as JSON, set once it parses. */
export function JsonField({ spec, value, onChange, disabled, problem }: FieldProps) {
  const id = useId()
  const [text, setText] = useEditedText(value, (current) =>
    current === null || current === undefined ? '' : JSON.stringify(current, null, 2),
  )
  let local: string | null = null
  if (text.trim() !== '') {
    try {
      JSON.parse(text)
    } catch {
      local = 'Not valid JSON yet.'
    }
  }
  return (
    <>
      <textarea
        id={id}
        rows={3}
        aria-label={`${spec.label} (JSON)`}
        aria-invalid={local || problem ? true : undefined}
        value={text}
        disabled={disabled}
        placeholder={placeholderOf(spec)}
        onChange={(event) => {
          const next = event.target.value
          setText(next)
          if (next.trim() === '') {
            onChange(null)
            return
          }
          try {
            onChange(JSON.parse(next) as unknown)
          } catch {
            // Half-typed JSON: the field says so, the document keeps the last good value.
          }
        }}
      />
      <Hint id={`${id}-hint`} problem={problem} local={local} />
    </>
  )
}

/** The field for a port, by its variable type and validator. */
export function ValueField(props: FieldProps) {
  switch (fieldKindOf(props.spec)) {
    case 'text':
    case 'textarea':
      return <TextField {...props} />
    case 'number':
    case 'integer':
      return <NumberField {...props} />
    case 'seed':
      return <SeedField {...props} />
    case 'boolean':
      return <BooleanField {...props} />
    case 'enum':
      return <EnumField {...props} />
    case 'media':
      return <MediaField {...props} />
    case 'json':
      return <JsonField {...props} />
  }
}
