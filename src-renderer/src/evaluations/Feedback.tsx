import { useState } from 'react'
import { useShallow } from 'zustand/react/shallow'
import type { EvaluationDetail, Rating } from '../../../src-shared/domain/evaluations'
import { useAppStore } from '../store'
import { Thumb } from './Thumb'
import { RATING_WORDS, shownRating } from './words'

/**
 * Thumbs up or down, with an optional reason in a small popover. The rating goes through the
 * outbox: offline it is shown as waiting, and sent by the replay after the next sync.
 */
export function Feedback({ evaluation }: { evaluation: EvaluationDetail }) {
  const { give, sending, problem } = useAppStore(
    useShallow((s) => ({
      give: s.giveFeedback,
      sending: s.feedbackSending,
      problem: s.feedbackProblem,
    })),
  )
  const { pending, feedback } = evaluation
  const rating = shownRating(feedback.rating, pending)
  const reason = pending?.state === 'pending' ? pending.reason : feedback.reason
  const [asking, setAsking] = useState<Rating | null>(null)
  const [draft, setDraft] = useState('')

  const choose = (chosen: Rating) => {
    setDraft(chosen === rating ? (reason ?? '') : '')
    setAsking(chosen)
  }
  const send = async () => {
    if (asking === null) return
    if (await give(asking, draft)) setAsking(null)
  }

  return (
    <section className="feedback card" aria-label="Your feedback">
      <div className="feedback-head">
        <h2>Your feedback</h2>
        {pending?.state === 'pending' ? (
          <span className="pending-note" role="status">
            Pending — will be sent when online
          </span>
        ) : pending?.state === 'rejected' ? (
          <span className="refused-note" role="status" title={pending.error ?? undefined}>
            Refused by the service{pending.error ? `: ${pending.error}` : ''}
          </span>
        ) : null}
      </div>
      <div className="thumbs" role="group" aria-label="Rate this evaluation">
        {(['up', 'down'] as const).map((choice) => (
          <button
            key={choice}
            type="button"
            className={`thumb-button ${rating === choice ? 'chosen' : ''}`}
            aria-pressed={rating === choice}
            disabled={sending}
            onClick={() => {
              choose(choice)
            }}
          >
            <Thumb rating={choice} size={18} />
            {RATING_WORDS[choice]}
          </button>
        ))}
        {rating !== null ? (
          <button
            type="button"
            className="link-button"
            disabled={sending}
            onClick={() => {
              setAsking(null)
              void give(null)
            }}
          >
            Clear rating
          </button>
        ) : null}
      </div>
      {reason && asking === null ? <p className="feedback-reason">“{reason}”</p> : null}
      {asking !== null ? (
        <div className="feedback-popover" role="dialog" aria-label="Why?">
          <label>
            <span>Why? (optional)</span>
            <textarea
              rows={3}
              maxLength={2000}
              value={draft}
              placeholder={asking === 'up' ? 'What works well' : 'What is wrong with it'}
              onChange={(event) => {
                setDraft(event.target.value)
              }}
              onKeyDown={(event) => {
                if (event.key === 'Escape') {
                  event.stopPropagation()
                  setAsking(null)
                } else if (event.key === 'Enter' && (event.ctrlKey || event.metaKey)) {
                  void send()
                }
              }}
            />
          </label>
          <div className="feedback-actions">
            <button
              type="button"
              className="primary-button"
              disabled={sending}
              onClick={() => {
                void send()
              }}
            >
              {sending ? 'Sending…' : `Send ${RATING_WORDS[asking].toLowerCase()}`}
            </button>
            <button
              type="button"
              className="small-button"
              onClick={() => {
                setAsking(null)
              }}
            >
              Cancel
            </button>
          </div>
        </div>
      ) : null}
      {problem ? (
        <p className="field-problem" role="alert">
          {problem.text}
        </p>
      ) : null}
    </section>
  )
}
