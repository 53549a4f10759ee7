import type { AssetDetail, AssetItem } from '../../../src-shared/domain/assets'
import { useAppStore } from '../store'
import { toastedCalls } from '../store/toastedCalls'

/** As the service allows: the same limits the main process checks again. */
export const ASSET_NAME_MAX = 255

/** What is wrong with a name typed for an asset, in words for the person; null when fine. */
export function assetNameProblem(name: string): string | null {
  const trimmed = name.trim()
  if (trimmed === '')
    return 'A name cannot be empty. Type a name, or press Escape to keep the old one.'
  if (trimmed.length > ASSET_NAME_MAX) {
    return `A name is at most ${ASSET_NAME_MAX} characters; this one has ${trimmed.length}.`
  }
  return null
}

function shown(item: AssetItem, id: string, name: string, answer?: AssetDetail): AssetItem {
  if (item.id !== id) return item
  if (!answer) return { ...item, name }
  const next: AssetItem = { ...item, name: answer.name }
  if (answer.pendingRename) next.pendingRename = answer.pendingRename
  else delete next.pendingRename
  return next
}

/** Puts the name on every copy the screen holds: the list and the open details. */
function showName(id: string, name: string, answer?: AssetDetail): void {
  const { assetItems, assetDetail } = useAppStore.getState()
  useAppStore.setState({
    assetItems: assetItems.map((item) => shown(item, id, name, answer)),
    assetDetail: assetDetail?.id !== id ? assetDetail : (answer ?? { ...assetDetail, name }),
  })
}

/**
 * Renames an asset: the new name shows at once, before the main process answers (it keeps the
 * rename in the outbox, so offline it waits there and is sent after the next sync). A toast
 * offers to undo, which renames it back. Answers whether the rename was taken.
 */
export async function renameAsset(id: string, name: string, before: string): Promise<boolean> {
  const get = useAppStore.getState
  const { fail } = toastedCalls(get)
  const api = window.atelier
  const wanted = name.trim()
  if (!api || wanted === before) return false
  showName(id, wanted)
  const result = await api.assets.rename({ id, name: wanted })
  if (!result.ok) {
    showName(id, before)
    fail(result.error)
    return false
  }
  showName(id, wanted, result.value)
  const pending = result.value.pendingRename
  if (pending?.state === 'refused') {
    get().pushToast({
      tone: 'error',
      title: `"${before}" was not renamed`,
      message: pending.message ?? 'The service refused the new name. Try another name.',
    })
    return false
  }
  get().pushToast({
    tone: pending ? 'info' : 'success',
    title: `Renamed "${before}" to "${wanted}"`,
    ...(pending ? { message: 'It will be sent when Atelier is back online.' } : {}),
    action: {
      label: 'Undo',
      run: () => {
        void renameAsset(id, before, wanted)
      },
    },
  })
  return true
}
