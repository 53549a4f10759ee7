import { useState } from 'react'
import { MediaImage } from '../../components/MediaImage'
import { Lightbox } from './Lightbox'
import { isVideo, type RunMedia } from './media'

/** Media side by side; a click opens the full view. */
export function MediaStrip({
  media,
  label,
  size = 256,
}: {
  media: RunMedia[]
  label: string
  size?: number
}) {
  const [open, setOpen] = useState<RunMedia | null>(null)
  return (
    <>
      <ul className="run-media" aria-label={label}>
        {media.map((item) => (
          <li key={`${item.path}:${item.sha256}`}>
            <button
              type="button"
              className="run-media-tile"
              title={isVideo(item) ? 'A video: open it from its link' : 'Open the full view'}
              disabled={isVideo(item)}
              onClick={() => {
                setOpen(item)
              }}
            >
              <MediaImage
                source={{ sha256: item.sha256, ...(item.url ? { url: item.url } : {}) }}
                alt={`${label}: ${item.path || 'file'}`}
                size={size}
              />
            </button>
            <span className="run-media-caption">
              {item.path}
              {item.width && item.height ? ` · ${item.width}×${item.height}` : ''}
            </span>
          </li>
        ))}
      </ul>
      {open ? (
        <Lightbox
          media={open}
          onClose={() => {
            setOpen(null)
          }}
        />
      ) : null}
    </>
  )
}
