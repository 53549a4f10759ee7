import { useShallow } from 'zustand/react/shallow'
import { useAppStore } from '../store'

/**
 * Background results, bottom right, newest last. Each is a polite status, so a screen reader
 * tells it without taking the focus away from what the person is doing.
 */
export function Toasts() {
  const { toasts, dismissToast } = useAppStore(
    useShallow((s) => ({ toasts: s.toasts, dismissToast: s.dismissToast })),
  )
  return (
    <section className="toast-stack" aria-label="Notifications">
      {toasts.map((toast) => (
        <div key={toast.id} className={`app-toast ${toast.tone}`} role="status" data-testid="toast">
          <div className="app-toast-text">
            <strong>{toast.title}</strong>
            {toast.message ? <span>{toast.message}</span> : null}
          </div>
          {toast.action ? (
            <button
              type="button"
              className="small-button"
              onClick={() => {
                toast.action?.run()
                dismissToast(toast.id)
              }}
            >
              {toast.action.label}
            </button>
          ) : null}
          <button
            type="button"
            className="app-toast-close"
            aria-label="Dismiss"
            onClick={() => {
              dismissToast(toast.id)
            }}
          >
            ×
          </button>
        </div>
      ))}
    </section>
  )
}
