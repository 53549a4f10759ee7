import { useState, type DragEvent } from 'react'
import { useShallow } from 'zustand/react/shallow'
import { useAppStore } from '../store'
import { droppedPaths } from './dropped'
import { plural } from './words'

/** Files dragged in from the system, as opposed to assets dragged inside the page. */
const fromSystem = (event: DragEvent) => event.dataTransfer.types.includes('Files')

/**
 * Folders and files dropped on the page from the system are uploaded; `dropping` shows the drop
 * zone while they hover. Assets dragged inside the page are left to the folder tree.
 */
export function useFileDrop() {
  const { choose, uploadDropped, pushToast } = useAppStore(
    useShallow((s) => ({
      choose: s.chooseUploadFolder,
      uploadDropped: s.uploadDropped,
      pushToast: s.pushToast,
    })),
  )
  const [dropping, setDropping] = useState(false)

  const handlers = {
    onDragOver: (event: DragEvent) => {
      if (!fromSystem(event)) return
      event.preventDefault()
      setDropping(true)
    },
    onDragLeave: (event: DragEvent) => {
      if (event.currentTarget === event.target) setDropping(false)
    },
    onDrop: (event: DragEvent) => {
      if (!fromSystem(event)) return
      event.preventDefault()
      setDropping(false)
      // Read now: the drop's items are gone once this handler returns.
      const dropped = droppedPaths(event.dataTransfer)
      if (dropped && (dropped.folders.length > 0 || dropped.files.length > 0)) {
        if (dropped.unknown > 0) {
          pushToast({
            tone: 'warning',
            title: `${plural(dropped.unknown, 'item', 'items')} left out`,
            message: 'They are not files or folders of this machine.',
          })
        }
        void uploadDropped(dropped)
        return
      }
      // A browser gives no path for what is dropped (only the desktop window can tell it):
      // the folder is chosen by its path instead.
      pushToast({
        tone: 'info',
        title: 'Choose the folder to upload',
        message:
          'A browser does not say where dropped files are on this machine; pick their folder here.',
      })
      void choose()
    },
  }
  return { dropping, handlers }
}
