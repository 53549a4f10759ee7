import { useEffect, useState } from 'react'
import { useAppStore } from '../store'
import { fileAsBase64, openRemix } from './remix'
import './remix.css'

/** Files dragged in from the system, not nodes or assets dragged inside the page. */
const fromSystem = (event: DragEvent) => event.dataTransfer?.types.includes('Files') ?? false

/**
 * A picture dropped anywhere on the window (the canvas included) opens the flow that made it,
 * or imports the ComfyUI workflow it carries (issue 20). The Assets screen keeps its own drop,
 * which uploads. Listened for on the window, so no screen has to know; a drop also never
 * navigates the window away to the file, which is what a browser does with one left unhandled.
 */
export function FileDrop() {
  const section = useAppStore((s) => s.section)
  const [hovering, setHovering] = useState(false)
  const active = section !== 'assets'

  useEffect(() => {
    if (!active) return
    // dragenter and dragleave fire for every element crossed: counted, the overlay stays put.
    let depth = 0
    const enter = (event: DragEvent) => {
      if (!fromSystem(event)) return
      depth += 1
      setHovering(true)
    }
    const over = (event: DragEvent) => {
      if (!fromSystem(event)) return
      event.preventDefault()
      if (event.dataTransfer) event.dataTransfer.dropEffect = 'copy'
    }
    const leave = (event: DragEvent) => {
      if (!fromSystem(event)) return
      depth = Math.max(0, depth - 1)
      if (depth === 0) setHovering(false)
    }
    const drop = (event: DragEvent) => {
      // A field that takes files itself (an image input) had it first.
      if (!fromSystem(event) || event.defaultPrevented) return
      event.preventDefault()
      depth = 0
      setHovering(false)
      // Read now: the drop's files are gone once this handler returns.
      const files = [...(event.dataTransfer?.files ?? [])]
      void openDropped(files)
    }
    window.addEventListener('dragenter', enter)
    window.addEventListener('dragover', over)
    window.addEventListener('dragleave', leave)
    window.addEventListener('drop', drop)
    return () => {
      window.removeEventListener('dragenter', enter)
      window.removeEventListener('dragover', over)
      window.removeEventListener('dragleave', leave)
      window.removeEventListener('drop', drop)
      setHovering(false)
    }
  }, [active])

  if (!active || !hovering) return null
  return (
    <div className="file-drop-overlay" role="status" aria-live="polite">
      <p>Drop a picture to open the flow that made it</p>
      <p className="muted">or a ComfyUI workflow (JSON or a picture ComfyUI saved) to import it</p>
    </div>
  )
}

async function openDropped(files: File[]): Promise<void> {
  const { pushToast } = useAppStore.getState()
  const [file] = files
  if (!file) {
    pushToast({
      tone: 'info',
      title: 'Nothing to open',
      message: 'Drop a picture file; folders and links are not read here.',
    })
    return
  }
  if (files.length > 1) {
    pushToast({
      tone: 'info',
      title: `Opening “${file.name}” only`,
      message: 'One picture opens at a time; drop the others one by one.',
    })
  }
  await openRemix({ file: { name: file.name, base64: await fileAsBase64(file) } }, 'new')
}
