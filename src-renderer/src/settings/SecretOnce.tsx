import { useState } from 'react'

/**
 * A plain secret shown this once, with Copy: a webhook's signing secret, a callback secret. It
 * lives in the dialog's state only, so it is gone from the window once the dialog closes.
 */
export function SecretOnce({ secret, testId }: { secret: string; testId: string }) {
  const [copied, setCopied] = useState<boolean | null>(null)
  return (
    <>
      <div className="settings-secret">
        <code data-testid={testId}>{secret}</code>
        <button
          type="button"
          className="primary-button"
          onClick={() => {
            navigator.clipboard.writeText(secret).then(
              () => {
                setCopied(true)
              },
              () => {
                setCopied(false)
              },
            )
          }}
        >
          {copied ? 'Copied' : 'Copy'}
        </button>
      </div>
      {copied === false ? (
        <p className="field-problem" role="alert">
          The clipboard is not available here: select the secret and copy it by hand.
        </p>
      ) : null}
    </>
  )
}
