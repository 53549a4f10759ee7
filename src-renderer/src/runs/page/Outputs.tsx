import { useState } from 'react'
import type { RemixSource } from '../../../../src-shared/domain/remix'
import { MediaImage } from '../../components/MediaImage'
import { OpenInEditor } from '../../shell/OpenInEditor'
import { DownloadOutput, downloadOf } from './DownloadOutput'
import { Lightbox } from './Lightbox'
import { isVideo, type RunMedia } from './media'

/**
 * Media side by side; a click opens the full view. `remix`, for a run's outputs: the record of
 * the picture at an index, so that each offers "Open in editor".
 */
export function MediaStrip({
  media,
  label,
  size = 256,
  remix,
}: {
  media: RunMedia[]
  label: string
  size?: number
  remix?: (index: number) => RemixSource
}) {
  const [open, setOpen] = useState<RunMedia | null>(null)
  const remixOf = (item: RunMedia) =>
    remix && !isVideo(item) ? remix(media.indexOf(item)) : undefined
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
            <RemixLink source={remixOf(item)} />
            <DownloadLink source={remix?.(media.indexOf(item))} />
          </li>
        ))}
      </ul>
      {open ? (
        <Lightbox
          media={open}
          remix={remixOf(open)}
          download={downloadOf(remix?.(media.indexOf(open))) ?? undefined}
          onClose={() => {
            setOpen(null)
          }}
        />
      ) : null}
    </>
  )
}

function RemixLink({ source }: { source: RemixSource | undefined }) {
  return source ? <OpenInEditor source={source} className="link-button" /> : null
}

/** "Download" for an output the app knows the run of (videos too: they are written as they are). */
function DownloadLink({ source }: { source: RemixSource | undefined }) {
  const request = downloadOf(source)
  return request ? <DownloadOutput request={request} className="link-button" /> : null
}
