import { useEffect, useState, type CSSProperties, type RefObject } from 'react'

/**
 * Where a toolbar popover goes: on the window, under its button. The editor's toolbar keeps to
 * one line and clips what overflows it, so a panel placed inside it would be cut off (the
 * Versions panel once was, entirely). Follows the window's size while the panel is open.
 */
export function usePlacedUnder(
  open: boolean,
  anchor: RefObject<HTMLElement | null>,
): CSSProperties | undefined {
  const [place, setPlace] = useState<CSSProperties | undefined>(undefined)
  useEffect(() => {
    if (!open) return
    const placeUnder = () => {
      const rect = anchor.current?.getBoundingClientRect()
      if (!rect) return
      setPlace({
        position: 'fixed',
        top: rect.bottom + 6,
        right: Math.max(8, window.innerWidth - rect.right),
        maxHeight: `calc(100vh - ${String(Math.round(rect.bottom + 18))}px)`,
        overflowY: 'auto',
      })
    }
    placeUnder()
    window.addEventListener('resize', placeUnder)
    return () => {
      window.removeEventListener('resize', placeUnder)
    }
  }, [open, anchor])
  return place
}
