import { useEffect, useState } from 'react'

/** What a picture needs: the file's sha256, and where to fetch it if this machine lacks it. */
export interface MediaSource {
  sha256: string
  url?: string
}

/** Previews already asked for, by sha256 and size: a canvas re-renders often, IPC is paid once. */
const previews = new Map<string, Promise<string | null>>()

function previewOf(source: MediaSource, size: number): Promise<string | null> {
  const key = `${source.sha256}:${size}`
  let known = previews.get(key)
  if (!known) {
    const url = source.url && /^https?:\/\//i.test(source.url) ? source.url : undefined
    const api = window.atelier
    if (!api) return Promise.resolve(null)
    known = api.media
      .preview({ sha256: source.sha256, size, ...(url ? { url } : {}) })
      .then((result) => (result.ok ? result.value.dataUrl : null))
      .catch(() => null)
    // A failure is not kept: the next render may be online again.
    void known.then((dataUrl) => {
      if (dataUrl === null) previews.delete(key)
    })
    previews.set(key, known)
  }
  return known
}

/**
 * An image output or asset, shown from the local media store through `media.preview` (a data
 * URL): the window's CSP loads no remote image, and offline the stored picture still shows. An
 * animated WebP or GIF (a model's short video) comes as an animated WebP and plays here.
 */
export function MediaImage(props: {
  source: MediaSource
  alt: string
  size?: number
  className?: string
}) {
  const { source, alt, size = 256, className } = props
  const { sha256, url } = source
  const key = `${sha256}:${size}:${url ?? ''}`
  const [loaded, setLoaded] = useState<{ key: string; dataUrl: string | null } | null>(null)
  useEffect(() => {
    let current = true
    void previewOf({ sha256, ...(url ? { url } : {}) }, size).then((dataUrl) => {
      if (current) setLoaded({ key, dataUrl })
    })
    return () => {
      current = false
    }
  }, [key, sha256, url, size])
  // Undefined while the picture for this very source is on its way.
  const dataUrl = loaded?.key === key ? loaded.dataUrl : undefined
  if (dataUrl === undefined) {
    return (
      <div className={`media-image loading ${className ?? ''}`} aria-label={`${alt} (loading)`} />
    )
  }
  if (dataUrl === null) {
    return (
      <div
        className={`media-image missing ${className ?? ''}`}
        role="img"
        aria-label={`${alt} (not available)`}
      >
        No preview
      </div>
    )
  }
  return <img className={className} src={dataUrl} alt={alt} />
}
