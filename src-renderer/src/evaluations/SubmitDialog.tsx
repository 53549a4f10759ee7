import { useEffect, useState } from 'react'
import { useShallow } from 'zustand/react/shallow'
import type { EvaluationSubmitInput } from '../../../src-shared/domain/evaluations'
import type { AssetResult } from '../../../src-shared/domain/search'
import type { PlainError } from '../shell/errorWords'
import { Modal } from '../shell/Modal'
import { useAppStore } from '../store'

const SEARCH_MS = 200

/** Image assets of the mirror whose name or folder matches the words, newest first without. */
function useAssetSearch(text: string): { found: AssetResult[]; problem: string | null } {
  const [state, setState] = useState<{ found: AssetResult[]; problem: string | null }>({
    found: [],
    problem: null,
  })
  useEffect(() => {
    const api = window.atelier
    if (!api) return
    let current = true
    const timer = setTimeout(() => {
      void api.search
        .query({ text, kind: 'assets', mediaType: 'image', limit: 20 })
        .then((result) => {
          if (!current) return
          setState(
            result.ok
              ? {
                  found: result.value.items.filter(
                    (item): item is AssetResult => item.kind === 'asset',
                  ),
                  problem: null,
                }
              : { found: [], problem: result.error.message },
          )
        })
    }, SEARCH_MS)
    return () => {
      current = false
      clearTimeout(timer)
    }
  }, [text])
  return state
}

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
  const [words, setWords] = useState('')
  const [assetId, setAssetId] = useState<string | null>(null)
  const [path, setPath] = useState('')
  const [jobClass, setJobClass] = useState<'standard' | 'quick'>('standard')
  const [prompt, setPrompt] = useState(reevaluate?.prompt ?? '')
  const [instructions, setInstructions] = useState(reevaluate?.instructions ?? '')
  const [sending, setSending] = useState(false)
  const [problem, setProblem] = useState<PlainError | null>(null)
  const { found, problem: searchProblem } = useAssetSearch(words)
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
            <div className="asset-picker">
              <input
                type="search"
                placeholder="Search image assets by name or folder"
                aria-label="Search the assets"
                value={words}
                onChange={(event) => {
                  setWords(event.target.value)
                }}
              />
              <ul role="listbox" aria-label="Image assets">
                {found.map((asset) => (
                  <li
                    key={asset.id}
                    role="option"
                    aria-selected={asset.id === assetId}
                    className={asset.id === assetId ? 'chosen' : ''}
                    tabIndex={0}
                    onClick={() => {
                      setAssetId(asset.id)
                    }}
                    onKeyDown={(event) => {
                      if (event.key === 'Enter' || event.key === ' ') {
                        event.preventDefault()
                        setAssetId(asset.id)
                      }
                    }}
                  >
                    <span className="asset-name">{asset.title}</span>
                    <span className="muted">{asset.folderPath ?? '/'}</span>
                  </li>
                ))}
                {found.length === 0 ? (
                  <li className="muted" aria-disabled="true">
                    {searchProblem ?? 'No image assets match. Sync, or upload images in Assets.'}
                  </li>
                ) : null}
              </ul>
            </div>
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
