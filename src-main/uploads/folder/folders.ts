import type { AssetFolder } from '../../../src-shared/api'
import { isServiceError, type ServiceClient } from '../../service'

/** Folder names compare as the service compares them: ignoring case. */
const keyOf = (parentId: string | null, name: string) => `${parentId ?? ''}/${name.toLowerCase()}`

/**
 * The asset folders of the organization, by parent and name, read once and kept up to date as
 * folders are made. A name the service refuses (409: made meanwhile by someone else) sends the
 * list to be read again, and the folder found there is used.
 */
export class AssetFolders {
  private byKey: Map<string, AssetFolder> | null = null

  constructor(
    private readonly service: ServiceClient,
    private readonly signal?: AbortSignal,
  ) {}

  /** The folder `name` under `parentId` (null: the top level), made when missing. */
  async ensure(parentId: string | null, name: string): Promise<string> {
    const known = (await this.all()).get(keyOf(parentId, name))
    if (known) return known.id
    try {
      const made = await this.service.post('/v1/asset-folders', {
        body: { name, parent_id: parentId },
        signal: this.signal,
      })
      this.byKey?.set(keyOf(parentId, made.name), made)
      return made.id
    } catch (error) {
      if (!(isServiceError(error) && error.status === 409)) throw error
      this.byKey = null
      const raced = (await this.all()).get(keyOf(parentId, name))
      if (raced) return raced.id
      throw error
    }
  }

  /**
   * The folder of every relative directory (`''` is the root of the upload), each made under
   * its parent: `a/b` lives in `a`, which lives in `target` (the top level when null).
   */
  async tree(target: string | null, dirs: Iterable<string>): Promise<Map<string, string | null>> {
    const ids = new Map<string, string | null>([['', target]])
    // Parents first: sorted, a directory comes after every prefix of it.
    for (const dir of [...new Set(dirs)].sort()) {
      let parent = target
      let path = ''
      for (const name of dir.split('/').filter((part) => part !== '')) {
        path = path === '' ? name : `${path}/${name}`
        const known = ids.get(path)
        parent = known === undefined ? await this.ensure(parent, name) : known
        ids.set(path, parent)
      }
    }
    return ids
  }

  private async all(): Promise<Map<string, AssetFolder>> {
    if (this.byKey) return this.byKey
    const byKey = new Map<string, AssetFolder>()
    for await (const folder of this.service.list('/v1/asset-folders', {
      params: { query: { limit: 500 } },
      signal: this.signal,
    })) {
      byKey.set(keyOf(folder.parent_id, folder.name), folder)
    }
    this.byKey = byKey
    return byKey
  }
}
