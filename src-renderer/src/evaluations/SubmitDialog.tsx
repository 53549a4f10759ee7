import { useState } from 'react'
import { useShallow } from 'zustand/react/shallow'
import type { EvaluationSubmitInput } from '../../../src-shared/domain/evaluations'
import { AssetPicker } from '../components/AssetPicker'
import type { PlainError } from '../shell/errorWords'
import { Modal } from '../shell/Modal'
import { useAppStore } from '../store'

/**
 * "Submit an evaluation…": an image asset of the organization (searched in the mirror), or an
 * image file on this computer by its full path (the browser mode has no file dialog; the
 * desktop window could offer one later), with the options the service takes.
 */
export function SubmitDialog() {
  const { setSubmitOpen, submit, reevaluate } = useAppStore(
    useShallow((s) => ({
      setSubmitOpen: s.setSubmitOpen,
      submit: s.submitEvaluation,
      reevaluate: s.openEvaluationId !== null && s.evaluation?.canReevaluate ? s.evaluation : null,
    })),
  )
  const [from, setFrom] = useState<'asset' | 'file'>('asset')
  const [assetId, setAssetId] = useState<string | null>(null)
  const [path, setPath] = useState('')
  const [jobClass, setJobClass] = useState<'standard' | 'quick'>('standard')
  const [prompt, setPrompt] = useState(reevaluate?.prompt ?? '')
  const [instructions, setInstructions] = useState(reevaluate?.instructions ?? '')
  const [sending, setSending] = useState(false)
  const [problem, setProblem] = useState<PlainError | null>(null)
  const close = () => {
    setSubmitOpen(false)
  }
  const reuse = reevaluate?.image.from === 'asset' && reevaluate.image.assetId !== null
  const parentId = reevaluate?.id

  const ready = reuse || (from === 'asset' ? assetId !== null : path.trim() !== '')
  const send = async () => {
    if (!ready || sending) return
    const image =
      reuse && reevaluate.image.assetId
        ? { assetId: reevaluate.image.assetId }
        : from === 'asset'
          ? { assetId: assetId ?? '' }
          : { path: path.trim() }
    const input: EvaluationSubmitInput = {
      image,
      jobClass,
      ...(prompt.trim() ? { prompt: prompt.trim() } : {}),
      ...(instructions.trim() ? { instructions: instructions.trim() } : {}),
      ...(parentId ? { parentId } : {}),
    }
    setSending(true)
    setProblem(null)
    const result = await submit(input)
    setSending(false)
    if ('code' in result) setProblem(result)
  }

  return (
    <Modal
      label={reevaluate ? 'Re-evaluate' : 'Submit an evaluation'}
      className="dialog wide stack submit-dialog"
      onClose={close}
    >
      <h2>{reevaluate ? 'Re-evaluate this image' : 'Submit an evaluation'}</h2>
      {reuse ? (
        <p className="muted">
          The same image is judged again; the new evaluation becomes attempt{' '}
          {(reevaluate.row.attempt ?? 1) + 1} and supersedes this one.
        </p>
      ) : (
        <>
          <div className="segmented" role="radiogroup" aria-label="Image from">
            {(
              [
                ['asset', 'An asset'],
                ['file', 'A file on this computer'],
              ] as const
            ).map(([value, label]) => (
              <label key={value} className={from === value ? 'checked' : ''}>
                <input
                  type="radio"
                  name="image-from"
                  value={value}
                  checked={from === value}
                  onChange={() => {
                    setFrom(value)
                  }}
                />
                {label}
              </label>
            ))}
          </div>
          {from === 'asset' ? (
            <AssetPicker
              chosen={assetId}
              onChoose={(asset) => {
                setAssetId(asset.id)
              }}
            />
          ) : (
            <div className="field">
              <label className="field">
                <span>Full path of an image file</span>
                <input
                  type="text"
                  placeholder="/home/me/Pictures/poster.png"
                  value={path}
                  onChange={(event) => {
                    setPath(event.target.value)
                  }}
                />
              </label>
              <small className="muted">
                It is uploaded to the organization's assets first (once: a file already there is not
                sent again).
              </small>
            </div>
          )}
        </>
      )}
      <fieldset className="segmented job-class" aria-label="Job class">
        {(
          [
            ['standard', 'Standard — thorough'],
            ['quick', 'Quick — fewer judges, cheaper'],
          ] as const
        ).map(([value, label]) => (
          <label key={value} className={jobClass === value ? 'checked' : ''}>
            <input
              type="radio"
              name="job-class"
              value={value}
              checked={jobClass === value}
              onChange={() => {
                setJobClass(value)
              }}
            />
            {label}
          </label>
        ))}
      </fieldset>
      <label className="field">
        <span>Prompt the image was made from (optional)</span>
        <textarea
          rows={2}
          value={prompt}
          onChange={(event) => {
            setPrompt(event.target.value)
          }}
        />
      </label>
      <label className="field">
        <span>Instructions for the judges (optional)</span>
        <textarea
          rows={2}
          value={instructions}
          onChange={(event) => {
            setInstructions(event.target.value)
          }}
        />
      </label>
      {problem ? (
        <div className="banner error" role="alert">
          {problem.text}
        </div>
      ) : null}
      <div className="dialog-actions">
        <button type="button" className="small-button" onClick={close}>
          Cancel
        </button>
        <button
          type="button"
          className="primary-button"
          disabled={!ready || sending}
          onClick={() => {
            void send()
          }}
        >
          {sending ? 'Submitting…' : 'Submit'}
        </button>
      </div>
    </Modal>
  )
}
