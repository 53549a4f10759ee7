import { useEffect, useRef, type ReactNode } from 'react'
import { matches, shortcutOf, SHELL_SHORTCUTS } from './shortcuts'

const FOCUSABLE =
  'button:not(:disabled), input:not(:disabled), select, textarea, [href], [tabindex]:not([tabindex="-1"])'

/**
 * A dialog over the whole window: it takes the focus (its first field or button), Escape or a
 * click beside it closes it, Tab stays inside, and the focus goes back where it was. Keys pressed inside do not reach the page underneath (the
 * editor would undo or delete behind it), except the shell's own shortcuts, so that Ctrl+K
 * still closes the palette and Ctrl+2 still goes to Assets.
 */
export function Modal({
  label,
  className,
  onClose,
  children,
}: {
  label: string
  className: string
  onClose: () => void
  children: ReactNode
}) {
  const dialog = useRef<HTMLDivElement>(null)

  useEffect(() => {
    const before = document.activeElement
    dialog.current?.querySelector<HTMLElement>(FOCUSABLE)?.focus()
    return () => {
      if (before instanceof HTMLElement && before.isConnected) before.focus()
    }
  }, [])

  return (
    <div
      className="overlay"
      onMouseDown={(event) => {
        if (event.target === event.currentTarget) onClose()
      }}
    >
      <div
        ref={dialog}
        role="dialog"
        aria-modal="true"
        aria-label={label}
        className={className}
        onKeyDown={(event) => {
          const native = event.nativeEvent
          if (shortcutOf(native, SHELL_SHORTCUTS) !== null) return
          event.stopPropagation()
          if (matches('close', native)) {
            event.preventDefault()
            onClose()
          } else if (event.key === 'Tab') {
            const focusable = [...(dialog.current?.querySelectorAll<HTMLElement>(FOCUSABLE) ?? [])]
            const first = focusable[0]
            const last = focusable.at(-1)
            if (!first || !last) return
            if (event.shiftKey && document.activeElement === first) {
              event.preventDefault()
              last.focus()
            } else if (!event.shiftKey && document.activeElement === last) {
              event.preventDefault()
              first.focus()
            }
          }
        }}
      >
        {children}
      </div>
    </div>
  )
}
