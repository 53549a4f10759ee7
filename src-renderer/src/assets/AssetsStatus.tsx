import { useShallow } from 'zustand/react/shallow'
import { useAppStore } from '../store'
import { plural } from './words'

/** Under the toolbar: what is selected and what can be done with it, or how many assets show. */
export function AssetsStatus({ filtered }: { filtered: boolean }) {
  const state = useAppStore(
    useShallow((s) => ({
      count: s.assetItems.length,
      more: s.assetNext !== null,
      selection: s.assetSelection,
      moveAssets: s.moveAssets,
      deleteAssets: s.deleteAssets,
      tree: s.assetTree,
    })),
  )
  return (
    <div className="assets-status" aria-live="polite">
      {state.selection.length > 0 ? (
        <>
          <span>{plural(state.selection.length, 'asset', 'assets')} selected</span>
          <select
            aria-label="Move the selected assets to"
            value=""
            onChange={(event) => {
              const target = event.target.value
              if (target === '') return
              void state.moveAssets(state.selection, target === 'root' ? null : target)
            }}
          >
            <option value="">Move to…</option>
            <option value="root">Top level</option>
            {state.tree?.folders.map((folder) => (
              <option key={folder.id} value={folder.id}>
                {folder.path}
              </option>
            ))}
          </select>
          <button
            type="button"
            className="small-button danger"
            onClick={() => {
              void state.deleteAssets(state.selection)
            }}
          >
            Delete
          </button>
        </>
      ) : (
        <span className="muted">
          {plural(state.count, 'asset', 'assets')}
          {state.more ? '+' : ''}
          {filtered ? (state.count === 1 && !state.more ? ' matches' : ' match') : ''}
        </span>
      )}
    </div>
  )
}
