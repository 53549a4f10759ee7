import { useMemo, useState, type DragEvent } from 'react'
import { useShallow } from 'zustand/react/shallow'
import type { AssetFolderItem } from '../../../src-shared/domain/assets'
import { useAppStore } from '../store'
import { ASSETS_DRAG, FOLDER_DRAG, readDrag } from './drag'

interface Node {
  folder: AssetFolderItem
  children: Node[]
}

/** Folders nested by parent; one whose parent is not known sits at the top. */
function nest(folders: readonly AssetFolderItem[]): Node[] {
  const nodes = new Map(folders.map((folder) => [folder.id, { folder, children: [] as Node[] }]))
  const top: Node[] = []
  for (const node of nodes.values()) {
    const parent = node.folder.parentId === null ? undefined : nodes.get(node.folder.parentId)
    if (parent) parent.children.push(node)
    else top.push(node)
  }
  const byName = (a: Node, b: Node) =>
    a.folder.name.localeCompare(b.folder.name, undefined, { numeric: true, sensitivity: 'base' })
  const sort = (list: Node[]) => {
    list.sort(byName)
    for (const node of list) sort(node.children)
  }
  sort(top)
  return top
}

/** Where something dragged lands: a folder's id, or null for the top level. */
function useDrop(target: string | null) {
  const { moveAssets, moveAssetFolder } = useAppStore(
    useShallow((s) => ({ moveAssets: s.moveAssets, moveAssetFolder: s.moveAssetFolder })),
  )
  const [over, setOver] = useState(false)
  return {
    over,
    props: {
      onDragOver: (event: DragEvent) => {
        const types = event.dataTransfer.types
        if (!types.includes(ASSETS_DRAG) && !types.includes(FOLDER_DRAG)) return
        event.preventDefault()
        event.dataTransfer.dropEffect = 'move'
        setOver(true)
      },
      onDragLeave: () => {
        setOver(false)
      },
      onDrop: (event: DragEvent) => {
        setOver(false)
        const dragged = readDrag(event.dataTransfer)
        if (!dragged) return
        event.preventDefault()
        event.stopPropagation()
        if (dragged.kind === 'assets') void moveAssets(dragged.ids, target)
        else if (dragged.id !== target) void moveAssetFolder(dragged.id, target)
      },
    },
  }
}

export function FolderTree() {
  const { tree, folder, setAssetFilters } = useAppStore(
    useShallow((s) => ({
      tree: s.assetTree,
      folder: s.assetFilters.folder,
      setAssetFilters: s.setAssetFilters,
    })),
  )
  const nodes = useMemo(() => nest(tree?.folders ?? []), [tree])
  const [creating, setCreating] = useState<{ parentId: string | null } | null>(null)
  const top = useDrop(null)

  return (
    <nav className="folder-tree" aria-label="Folders">
      <div className="folder-tree-head">
        <h2>Folders</h2>
        <button
          type="button"
          className="small-button"
          onClick={() => {
            setCreating({ parentId: null })
          }}
        >
          New folder
        </button>
      </div>
      <ul role="tree" aria-label="Asset folders">
        <li role="treeitem" aria-selected={folder === null}>
          <button
            type="button"
            className={`folder-row ${folder === null ? 'active' : ''}`}
            onClick={() => {
              setAssetFilters({ folder: null })
            }}
          >
            <span className="folder-name">All assets</span>
            <span className="folder-count">{tree?.total ?? ''}</span>
          </button>
        </li>
        <li role="treeitem" aria-selected={folder === 'root'}>
          <button
            type="button"
            className={`folder-row ${folder === 'root' ? 'active' : ''} ${top.over ? 'drop' : ''}`}
            title="Assets outside every folder; drop here to move to the top level"
            onClick={() => {
              setAssetFilters({ folder: 'root' })
            }}
            {...top.props}
          >
            <span className="folder-name">Top level</span>
            <span className="folder-count">{tree?.rootCount ?? ''}</span>
          </button>
        </li>
        {creating?.parentId === null ? (
          <NameField
            initial=""
            depth={0}
            label="New folder name"
            onDone={() => {
              setCreating(null)
            }}
            save={(name) => useAppStore.getState().createAssetFolder(name, null)}
          />
        ) : null}
        {nodes.map((node) => (
          <FolderNode
            key={node.folder.id}
            node={node}
            depth={0}
            creating={creating}
            setCreating={setCreating}
          />
        ))}
      </ul>
    </nav>
  )
}

function FolderNode({
  node,
  depth,
  creating,
  setCreating,
}: {
  node: Node
  depth: number
  creating: { parentId: string | null } | null
  setCreating: (value: { parentId: string | null } | null) => void
}) {
  const { folder } = node
  const { active, setAssetFilters, deleteAssetFolder, moveAssetFolder } = useAppStore(
    useShallow((s) => ({
      active: s.assetFilters.folder === folder.id,
      setAssetFilters: s.setAssetFilters,
      deleteAssetFolder: s.deleteAssetFolder,
      moveAssetFolder: s.moveAssetFolder,
    })),
  )
  const [open, setOpen] = useState(true)
  const [renaming, setRenaming] = useState(false)
  const [menu, setMenu] = useState(false)
  const drop = useDrop(folder.id)
  const hasChildren = node.children.length > 0 || creating?.parentId === folder.id

  return (
    <li role="treeitem" aria-selected={active} aria-expanded={hasChildren ? open : undefined}>
      {renaming ? (
        <NameField
          initial={folder.name}
          depth={depth}
          // In the folder's own item: an item of its own would sit inside it.
          inItem
          label={`New name for ${folder.name}`}
          onDone={() => {
            setRenaming(false)
          }}
          save={(name) => useAppStore.getState().renameAssetFolder(folder.id, name)}
        />
      ) : (
        <div
          className={`folder-row ${active ? 'active' : ''} ${drop.over ? 'drop' : ''}`}
          style={{ paddingLeft: 8 + depth * 14 }}
          draggable
          onDragStart={(event) => {
            event.dataTransfer.setData(FOLDER_DRAG, folder.id)
            event.dataTransfer.effectAllowed = 'move'
          }}
          {...drop.props}
        >
          <button
            type="button"
            className="folder-toggle"
            aria-label={open ? `Collapse ${folder.name}` : `Expand ${folder.name}`}
            disabled={!hasChildren}
            onClick={() => {
              setOpen(!open)
            }}
          >
            {hasChildren ? (open ? '▾' : '▸') : ''}
          </button>
          <button
            type="button"
            className="folder-name"
            title={folder.path}
            onClick={() => {
              setAssetFilters({ folder: folder.id })
            }}
          >
            {folder.name}
          </button>
          <span className="folder-count">{folder.assetCount}</span>
          <button
            type="button"
            className="folder-menu-button"
            aria-label={`Actions for ${folder.name}`}
            aria-haspopup="menu"
            aria-expanded={menu}
            onClick={() => {
              setMenu(!menu)
            }}
          >
            ⋯
          </button>
          {menu ? (
            <div
              className="folder-menu"
              role="menu"
              onMouseLeave={() => {
                setMenu(false)
              }}
            >
              {[
                {
                  label: 'New folder inside',
                  run: () => {
                    setOpen(true)
                    setCreating({ parentId: folder.id })
                  },
                },
                {
                  label: 'Rename',
                  run: () => {
                    setRenaming(true)
                  },
                },
                ...(folder.parentId === null
                  ? []
                  : [
                      {
                        label: 'Move to the top level',
                        run: () => void moveAssetFolder(folder.id, null),
                      },
                    ]),
                { label: 'Delete', run: () => void deleteAssetFolder(folder.id), danger: true },
              ].map((item) => (
                <button
                  key={item.label}
                  type="button"
                  role="menuitem"
                  className={'danger' in item ? 'danger' : ''}
                  onClick={() => {
                    setMenu(false)
                    item.run()
                  }}
                >
                  {item.label}
                </button>
              ))}
            </div>
          ) : null}
        </div>
      )}
      {open && hasChildren ? (
        <ul role="group">
          {creating?.parentId === folder.id ? (
            <NameField
              initial=""
              depth={depth + 1}
              label={`New folder in ${folder.name}`}
              onDone={() => {
                setCreating(null)
              }}
              save={(name) => useAppStore.getState().createAssetFolder(name, folder.id)}
            />
          ) : null}
          {node.children.map((child) => (
            <FolderNode
              key={child.folder.id}
              node={child}
              depth={depth + 1}
              creating={creating}
              setCreating={setCreating}
            />
          ))}
        </ul>
      ) : null}
    </li>
  )
}

/**
 * A name typed in place: Enter saves, Escape or leaving the field gives up. A list item of its
 * own for a new folder; `inItem` for a rename, in the folder's item.
 */
function NameField(props: {
  initial: string
  depth: number
  inItem?: boolean
  label: string
  save: (name: string) => Promise<boolean>
  onDone: () => void
}) {
  const [name, setName] = useState(props.initial)
  const [busy, setBusy] = useState(false)
  const submit = async () => {
    const trimmed = name.trim()
    if (trimmed === '' || trimmed === props.initial) {
      props.onDone()
      return
    }
    setBusy(true)
    const saved = await props.save(trimmed)
    setBusy(false)
    if (saved) props.onDone()
  }
  const Wrapper = props.inItem ? 'div' : 'li'
  return (
    <Wrapper className="folder-name-field" style={{ paddingLeft: 8 + props.depth * 14 }}>
      <input
        type="text"
        aria-label={props.label}
        value={name}
        disabled={busy}
        autoFocus
        onChange={(event) => {
          setName(event.target.value)
        }}
        onKeyDown={(event) => {
          event.stopPropagation()
          if (event.key === 'Enter') void submit()
          if (event.key === 'Escape') props.onDone()
        }}
        onBlur={() => {
          if (!busy) props.onDone()
        }}
      />
    </Wrapper>
  )
}
