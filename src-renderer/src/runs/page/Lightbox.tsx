import { useRef, useState, type PointerEvent, type WheelEvent } from 'react'
import { MediaImage } from '../../components/MediaImage'
import type { RemixSource } from '../../../../src-shared/domain/remix'
import { Modal } from '../../shell/Modal'
import { OpenInEditor } from '../../shell/OpenInEditor'
import type { OutputExportRequest } from '../../../../src-shared/ipc/contracts/outputs'
import { DownloadOutput } from './DownloadOutput'
import type { RunMedia } from './media'

const MIN_ZOOM = 0.25
const MAX_ZOOM = 8

interface View {
  zoom: number
  x: number
  y: number
}

const FIT: View = { zoom: 1, x: 0, y: 0 }

/** One output over the whole window: wheel or buttons to zoom, drag to pan, Esc to close. */
export function Lightbox({
  media,
  onClose,
  remix,
  download,
}: {
  media: RunMedia
  onClose: () => void
  /** The output as a download asks for it: "Download" saves it with its record inside. */
  download?: OutputExportRequest | undefined
  /** The picture's record, when it has one: "Open in editor" is offered. */
  remix?: RemixSource | undefined
}) {
  const [view, setView] = useState<View>(FIT)
  const drag = useRef<{ x: number; y: number; from: View } | null>(null)
  const zoomBy = (factor: number) => {
    setView((v) => ({ ...v, zoom: Math.min(MAX_ZOOM, Math.max(MIN_ZOOM, v.zoom * factor)) }))
  }
  const onWheel = (event: WheelEvent) => {
    zoomBy(event.deltaY < 0 ? 1.15 : 1 / 1.15)
  }
  const onPointerDown = (event: PointerEvent) => {
    event.currentTarget.setPointerCapture(event.pointerId)
    drag.current = { x: event.clientX, y: event.clientY, from: view }
  }
  const onPointerMove = (event: PointerEvent) => {
    const start = drag.current
    if (!start) return
    setView({
      ...start.from,
      x: start.from.x + event.clientX - start.x,
      y: start.from.y + event.clientY - start.y,
    })
  }
  const size = media.width && media.height ? `${media.width} × ${media.height}` : null
  return (
    <Modal label="Output, full view" className="run-lightbox" onClose={onClose}>
      <div className="run-lightbox-bar">
        <span className="run-lightbox-title">
          {media.path || 'output'}
          {size ? <span className="muted"> · {size}</span> : null}
        </span>
        <span className="run-lightbox-zoom" aria-live="polite">
          {Math.round(view.zoom * 100)}%
        </span>
        <button
          type="button"
          className="small-button"
          aria-label="Zoom out"
          onClick={() => {
            zoomBy(1 / 1.25)
          }}
        >
          −
        </button>
        <button
          type="button"
          className="small-button"
          aria-label="Zoom in"
          onClick={() => {
            zoomBy(1.25)
          }}
        >
          +
        </button>
        <button
          type="button"
          className="small-button"
          onClick={() => {
            setView(FIT)
          }}
        >
          Fit
        </button>
        {remix ? <OpenInEditor source={remix} /> : null}
        {download ? <DownloadOutput request={download} /> : null}
        <button type="button" className="small-button" onClick={onClose}>
          Close <kbd>Esc</kbd>
        </button>
      </div>
      <div
        className="run-lightbox-stage"
        onWheel={onWheel}
        onPointerDown={onPointerDown}
        onPointerMove={onPointerMove}
        onPointerUp={() => {
          drag.current = null
        }}
        onDoubleClick={() => {
          setView(FIT)
        }}
      >
        <div
          className="run-lightbox-picture"
          style={{ transform: `translate(${view.x}px, ${view.y}px) scale(${view.zoom})` }}
        >
          <MediaImage
            source={{ sha256: media.sha256, ...(media.url ? { url: media.url } : {}) }}
            alt={`Output ${media.path}`}
            size={1024}
          />
        </div>
      </div>
    </Modal>
  )
}
