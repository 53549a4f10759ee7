/** What a drag inside the asset manager carries: its own types, so a drop from elsewhere is not taken for one. */
export const ASSETS_DRAG = 'application/x-atelier-assets'
export const FOLDER_DRAG = 'application/x-atelier-folder'

export type Dragged = { kind: 'assets'; ids: string[] } | { kind: 'folder'; id: string }

export function readDrag(data: DataTransfer): Dragged | null {
  const folder = data.getData(FOLDER_DRAG)
  if (folder !== '') return { kind: 'folder', id: folder }
  const assets = data.getData(ASSETS_DRAG)
  if (assets === '') return null
  try {
    const ids = JSON.parse(assets) as unknown
    return Array.isArray(ids) && ids.every((id) => typeof id === 'string')
      ? { kind: 'assets', ids }
      : null
  } catch {
    return null
  }
}
