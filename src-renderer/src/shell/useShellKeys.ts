import { useEffect } from 'react'
import { useAppStore } from '../store'
import { sectionOfShortcut, SHELL_SHORTCUTS, shortcutOf, typingInField } from './shortcuts'

/** The shell's shortcuts, from the one table: the palette, the help sheet, the sections. */
export function useShellKeys() {
  useEffect(() => {
    const onKey = (event: KeyboardEvent) => {
      const id = shortcutOf(event, SHELL_SHORTCUTS)
      if (id === null) return
      const plainKey = !event.ctrlKey && !event.metaKey
      if (plainKey && typingInField(event.target)) return
      event.preventDefault()
      const state = useAppStore.getState()
      const section = sectionOfShortcut(id)
      if (section !== null) {
        state.closeOverlay()
        state.goTo(section)
      } else if (id === 'palette') state.toggleOverlay('palette')
      else if (id === 'help') state.toggleOverlay('shortcuts')
    }
    window.addEventListener('keydown', onKey)
    return () => {
      window.removeEventListener('keydown', onKey)
    }
  }, [])
}
