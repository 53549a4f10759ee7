import type Database from 'better-sqlite3'
import type { Asset, AssetFolder, RunStatusCode } from '../../../src-shared/api'
import type {
  AssetDetail,
  AssetFolderItem,
  AssetFolderTree,
  AssetItem,
  AssetListQuery,
  AssetPage,
  AssetUse,
} from '../../../src-shared/domain/assets'
import { Conditions, type Mirror } from '../../db'
import { isSearchError, MirrorSearch } from '../../search'
import { AssetsError } from './errors'

/** What is hidden from every read: deletes held back for undo. */
export interface Hidden {
  assets: () => ReadonlySet<string>
  folders: () => ReadonlySet<string>
}

/** The newest runs that used an asset, listed on its page. */
const USES_SHOWN = 20
/** A URL this close to expiry is not handed out: the preview would fetch it too late. */
const URL_MARGIN_MS = 60_000

/**
 * The asset manager's reads, all from the mirror, so they answer offline and at once. Each is
 * one small statement: a keyset page along an index, a lookup by id, a count per folder.
 */
export class AssetLibrary {
  private readonly statements = new Map<string, Database.Statement>()
  private readonly search: MirrorSearch
  private readonly countsByFolder: Database.Statement
  private readonly uses: Database.Statement
  private readonly childFolder: Database.Statement
  private readonly assetIn: Database.Statement

  constructor(
    private readonly mirror: Mirror,
    private readonly orgId: string,
    private readonly hidden: Hidden,
    private readonly clock: () => number,
    /** What the person changed that the service has not taken yet (a rename), shown on top. */
    private readonly overlay: (item: AssetItem) => AssetItem = (item) => item,
  ) {
    this.search = new MirrorSearch(mirror, { now: clock })
    // Along assets_by_folder: one index entry per asset, no row read.
    this.countsByFolder = mirror.db.prepare(
      'SELECT folder_id, count(*) FROM assets WHERE org_id = ? GROUP BY folder_id',
    )
    // Run inputs name assets by id; the id's words are a phrase of the runs' input text index,
    // so the lookup reads the few runs that hold it instead of every run's JSON.
    this.uses = mirror.db.prepare(`
      SELECT r.id, r.created_ms, r.status_code, r.model_slug, r.prompt, r.json
      FROM runs_fts JOIN runs r ON r.seq = runs_fts.rowid
      WHERE runs_fts MATCH ? AND r.org_id = ?
      ORDER BY r.created_ms DESC, r.seq DESC LIMIT ?`)
    this.childFolder = mirror.db.prepare(
      'SELECT id FROM asset_folders WHERE org_id = ? AND parent_id = ?',
    )
    this.assetIn = mirror.db.prepare(
      'SELECT id FROM assets WHERE org_id = ? AND folder_id = ? LIMIT ?',
    )
  }

  list(query: AssetListQuery): AssetPage {
    if (query.text.trim() !== '') return this.found(query)
    const cursor = query.cursor ? decodeListCursor(query.cursor) : null
    const where = new Conditions().add('org_id = ?', this.orgId)
    if (query.folder === 'root') where.add('folder_id IS NULL')
    else if (query.folder !== undefined) where.add('folder_id = ?', query.folder)
    if (query.mediaType !== undefined) where.add('media_type = ?', query.mediaType)
    if (query.from !== undefined) where.add('created_ms >= ?', query.from)
    if (query.to !== undefined) where.add('created_ms < ?', query.to)
    if (query.minBytes !== undefined) where.add('size_bytes >= ?', query.minBytes)
    if (query.maxBytes !== undefined) where.add('size_bytes < ?', query.maxBytes)
    const hidden = [...this.hidden.assets()]
    if (hidden.length > 0) {
      where.add('id NOT IN (SELECT value FROM json_each(?))', JSON.stringify(hidden))
    }
    if (cursor) where.add('(created_ms, seq) < (?, ?)', cursor[0], cursor[1])
    const rows = this.statement(
      `SELECT created_ms, seq, json FROM assets WHERE ${where.sql}
       ORDER BY created_ms DESC, seq DESC LIMIT ?`,
    )
      .raw()
      .all(...where.values, query.limit + 1) as [number, number, string][]
    const kept = rows.slice(0, query.limit)
    const last = kept.at(-1)
    return {
      items: kept.map(([, , json]) => this.item(JSON.parse(json) as Asset)),
      next: rows.length > query.limit && last ? encodeListCursor(last[0], last[1]) : null,
    }
  }

  /**
   * Words go through the offline search (name and folder path, ranked). The size filter is not
   * one of its filters, so it is checked on the page: a page may hold fewer than `limit`.
   */
  private found(query: AssetListQuery): AssetPage {
    const searchCursor = query.cursor ? decodeSearchCursor(query.cursor) : null
    const iso = (ms: number) => new Date(ms).toISOString()
    let result
    try {
      result = this.search.search(
        { orgId: this.orgId },
        {
          text: query.text,
          kind: 'assets',
          ...(query.folder === undefined
            ? {}
            : { folder: query.folder === 'root' ? '/' : query.folder }),
          ...(query.mediaType === undefined ? {} : { mediaType: query.mediaType }),
          ...(query.from === undefined ? {} : { from: iso(query.from) }),
          ...(query.to === undefined ? {} : { to: iso(query.to) }),
          limit: Math.min(query.limit, 100),
          cursor: searchCursor,
        },
      )
    } catch (error) {
      if (isSearchError(error)) throw new AssetsError(error.code, error.message)
      throw error
    }
    const hidden = this.hidden.assets()
    const items: AssetItem[] = []
    for (const found of result.items) {
      if (found.kind !== 'asset' || hidden.has(found.id)) continue
      if (query.minBytes !== undefined && found.sizeBytes < query.minBytes) continue
      if (query.maxBytes !== undefined && found.sizeBytes >= query.maxBytes) continue
      const asset = this.mirror.assets.get(found.id)
      if (asset) items.push(this.item(asset))
    }
    return { items, next: result.next === null ? null : `s:${result.next}` }
  }

  get(id: string): AssetDetail {
    const asset = this.mirror.assets.get(id)
    if (!asset || asset.org_id !== this.orgId || this.hidden.assets().has(id)) {
      throw new AssetsError(
        'NOT_FOUND',
        'This asset is not in the local copy: it was deleted, or it has not been synced yet. Sync, then try again.',
      )
    }
    const folder = asset.folder_id === null ? null : this.mirror.assetFolders.get(asset.folder_id)
    const { uses, more } = this.usesOf(asset.id)
    return {
      ...this.item(asset),
      folderPath: folder?.path ?? null,
      updatedAt: asset.updated_at,
      metadata: asset.metadata,
      usedBy: uses,
      usedByMore: more,
    }
  }

  private usesOf(assetId: string): { uses: AssetUse[]; more: boolean } {
    const words = assetId.replaceAll('"', '""')
    const rows = this.uses.all(`input_text : "${words}"`, this.orgId, USES_SHOWN + 1) as {
      id: string
      created_ms: number
      status_code: RunStatusCode
      model_slug: string | null
      prompt: string | null
      json: string
    }[]
    // The phrase ignores the punctuation between the id's words: the input itself decides.
    const named = rows.filter((row) => row.json.includes(assetId))
    return {
      uses: named.slice(0, USES_SHOWN).map((row) => ({
        runId: row.id,
        createdAt: new Date(row.created_ms).toISOString(),
        status: row.status_code,
        model: row.model_slug,
        title: row.prompt ?? row.model_slug ?? 'Run',
      })),
      more: named.length > USES_SHOWN,
    }
  }

  folders(): AssetFolderTree {
    const hiddenFolders = this.hidden.folders()
    const counts = new Map<string | null, number>()
    let total = 0
    for (const [folderId, count] of this.countsByFolder.raw().all(this.orgId) as [
      string | null,
      number,
    ][]) {
      counts.set(folderId, count)
      total += count
    }
    for (const id of this.hidden.assets()) {
      const asset = this.mirror.assets.get(id)
      if (!asset) continue
      counts.set(asset.folder_id, (counts.get(asset.folder_id) ?? 1) - 1)
      total--
    }
    const folders: AssetFolderItem[] = []
    let after: string | null = null
    do {
      const page = this.mirror.assetFolders.list({ orgId: this.orgId, limit: 500, after })
      for (const folder of page.items) {
        if (!hiddenFolders.has(folder.id)) folders.push(folderItem(folder, counts.get(folder.id)))
      }
      after = page.next
    } while (after !== null)
    return { folders, rootCount: counts.get(null) ?? 0, total }
  }

  folder(id: string): AssetFolder | null {
    const folder = this.mirror.assetFolders.get(id)
    return folder && folder.org_id === this.orgId && !this.hidden.folders().has(id) ? folder : null
  }

  /** Whether a folder holds anything the mirror knows of (held deletes aside). */
  holdsSomething(folderId: string): boolean {
    const hiddenFolders = this.hidden.folders()
    const children = (this.childFolder.pluck().all(this.orgId, folderId) as string[]).filter(
      (id) => !hiddenFolders.has(id),
    )
    if (children.length > 0) return true
    const hiddenAssets = this.hidden.assets()
    const assets = this.assetIn.pluck().all(this.orgId, folderId, hiddenAssets.size + 1) as string[]
    return assets.some((id) => !hiddenAssets.has(id))
  }

  item(asset: Asset): AssetItem {
    const expires = asset.url_expires_at === null ? null : Date.parse(asset.url_expires_at)
    const fresh = asset.url !== null && (expires === null || expires > this.clock() + URL_MARGIN_MS)
    return this.overlay({
      id: asset.id,
      name: asset.name,
      folderId: asset.folder_id,
      mediaType: asset.media_type,
      contentType: asset.content_type,
      sizeBytes: asset.size_bytes,
      sha256: asset.sha256,
      width: asset.width,
      height: asset.height,
      durationMs: asset.duration_ms,
      status: asset.status_code,
      createdAt: asset.created_at,
      url: fresh ? asset.url : null,
    })
  }

  private statement(sql: string): Database.Statement {
    let statement = this.statements.get(sql)
    if (!statement) {
      statement = this.mirror.db.prepare(sql)
      this.statements.set(sql, statement)
    }
    return statement
  }
}

export function folderItem(folder: AssetFolder, assetCount = 0): AssetFolderItem {
  return {
    id: folder.id,
    parentId: folder.parent_id,
    name: folder.name,
    path: folder.path,
    assetCount: Math.max(0, assetCount),
  }
}

function invalidCursor(): AssetsError {
  return new AssetsError(
    'ASSETS_INVALID_CURSOR',
    'This page cursor belongs to another list; load the list again from its first page.',
  )
}

/** `l:` and the last row's sort key, so a list cursor is never taken for a search's. */
function encodeListCursor(createdMs: number, seq: number): string {
  return `l:${Buffer.from(JSON.stringify([createdMs, seq])).toString('base64url')}`
}

function decodeListCursor(cursor: string): [number, number] {
  if (!cursor.startsWith('l:')) throw invalidCursor()
  let parsed: unknown
  try {
    parsed = JSON.parse(Buffer.from(cursor.slice(2), 'base64url').toString('utf8'))
  } catch {
    throw invalidCursor()
  }
  if (
    !Array.isArray(parsed) ||
    parsed.length !== 2 ||
    !parsed.every((value) => Number.isSafeInteger(value))
  ) {
    throw invalidCursor()
  }
  return parsed as [number, number]
}

function decodeSearchCursor(cursor: string): string {
  if (!cursor.startsWith('s:') || cursor.length < 3) throw invalidCursor()
  return cursor.slice(2)
}
