import { useEffect, useState } from 'react'
import type { MediaType } from '../../../src-shared/api'
import type { AssetResult } from '../../../src-shared/domain/search'

const SEARCH_MS = 200

/**
 * Assets of the mirror of one media type whose name or folder matches the words (the offline
 * search; newest first without words), read again a moment after the words stop changing.
 */
export function useAssetSearch(
  text: string,
  mediaType: MediaType,
): { found: AssetResult[]; problem: string | null } {
  const [state, setState] = useState<{ found: AssetResult[]; problem: string | null }>({
    found: [],
    problem: null,
  })
  useEffect(() => {
    const api = window.atelier
    if (!api) return
    let current = true
    const timer = setTimeout(() => {
      void api.search.query({ text, kind: 'assets', mediaType, limit: 20 }).then((result) => {
        if (!current) return
        setState(
          result.ok
            ? {
                found: result.value.items.filter(
                  (item): item is AssetResult => item.kind === 'asset',
                ),
                problem: null,
              }
            : { found: [], problem: result.error.message },
        )
      })
    }, SEARCH_MS)
    return () => {
      current = false
      clearTimeout(timer)
    }
  }, [text, mediaType])
  return state
}

const capitalized = (word: string) => `${word.charAt(0).toUpperCase()}${word.slice(1)}`

/**
 * An asset of the organization, searched in the mirror by name or folder: the words, then the
 * matches as a list box to choose from (click, Enter or Space). Used by "Submit an evaluation…"
 * and by the image and video inputs of the flow editor.
 */
export function AssetPicker(props: {
  /** The id of the asset chosen, to mark it in the list. */
  chosen: string | null
  onChoose: (asset: AssetResult) => void
  mediaType?: MediaType
  autoFocus?: boolean
}) {
  const { chosen, onChoose, mediaType = 'image', autoFocus } = props
  const [words, setWords] = useState('')
  const { found, problem } = useAssetSearch(words, mediaType)
  return (
    <div className="asset-picker">
      <input
        type="search"
        placeholder={`Search ${mediaType} assets by name or folder`}
        aria-label="Search the assets"
        value={words}
        // A picker opened on purpose takes the typing at once.
        autoFocus={autoFocus}
        onChange={(event) => {
          setWords(event.target.value)
        }}
      />
      <ul role="listbox" aria-label={`${capitalized(mediaType)} assets`}>
        {found.map((asset) => (
          <li
            key={asset.id}
            role="option"
            aria-selected={asset.id === chosen}
            className={asset.id === chosen ? 'chosen' : ''}
            tabIndex={0}
            onClick={() => {
              onChoose(asset)
            }}
            onKeyDown={(event) => {
              if (event.key === 'Enter' || event.key === ' ') {
                event.preventDefault()
                onChoose(asset)
              }
            }}
          >
            <span className="asset-name">{asset.title}</span>
            <span className="muted">{asset.folderPath ?? '/'}</span>
          </li>
        ))}
        {found.length === 0 ? (
          <li className="muted" aria-disabled="true">
            {problem ?? `No ${mediaType} assets match. Sync, or upload ${mediaType}s in Assets.`}
          </li>
        ) : null}
      </ul>
    </div>
  )
}
