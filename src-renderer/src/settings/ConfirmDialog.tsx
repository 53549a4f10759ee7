import { Modal } from '../shell/Modal'

/** Asks before something that cannot be undone; the safe choice has the focus first. */
export function ConfirmDialog({
  title,
  message,
  confirmLabel,
  onConfirm,
  onCancel,
}: {
  title: string
  message: string
  confirmLabel: string
  onConfirm: () => void
  onCancel: () => void
}) {
  return (
    <Modal label={title} className="dialog settings-dialog" onClose={onCancel}>
      <h2>{title}</h2>
      <p>{message}</p>
      <div className="dialog-actions">
        <button type="button" className="small-button" onClick={onCancel}>
          Cancel
        </button>
        <button type="button" className="danger-button" onClick={onConfirm}>
          {confirmLabel}
        </button>
      </div>
    </Modal>
  )
}
