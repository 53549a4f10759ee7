import type { AssetItem, PendingRename } from '../../../src-shared/domain/assets'
import type { Databases } from '../../db'
import type { Logger } from '../../log'
import { OutboxReplayer, type OutboxItem } from '../../outbox'
import type { ServiceClient } from '../../service'

/** How long a rename waits for the service before it answers with the name pending. */
export const RENAME_SEND_MS = 8_000

export interface RenamesOptions {
  client: ServiceClient
  databases: Databases
  profile: string
  orgId: string
  logger: Logger
  /** True while the service is known to be unreachable: the rename then just waits. */
  offline?: () => boolean
  sendTimeoutMs?: number
}

/**
 * Asset renames go through the outbox, unlike the other asset changes: a name is a small edit
 * a person expects to make offline, and setting it twice changes nothing, so it is safe to
 * replay. The mirror keeps the service's name; every read overlays the rename still waiting
 * (`overlay`), so the new name shows at once and says it is not sent yet.
 */
export class AssetRenames {
  private readonly replayer: OutboxReplayer
  private readonly closing = new AbortController()

  constructor(private readonly options: RenamesOptions) {
    this.replayer = new OutboxReplayer({
      client: options.client,
      ledger: options.databases.ledger,
      mirror: options.databases.mirror,
      profileName: options.profile,
      orgId: options.orgId,
    })
  }

  /**
   * Stores the rename, then (unless offline) replays the outbox for a short while. A new name
   * replaces a refused one: that one is dropped, its reason having been shown.
   */
  async rename(assetId: string, name: string): Promise<void> {
    for (const item of this.renamesOf(assetId)) {
      if (item.state === 'rejected') this.replayer.discard(item.seq)
    }
    this.replayer.enqueue({ kind: 'asset.rename', assetId, name })
    if (this.options.offline?.() === true || this.closing.signal.aborted) return
    const signal = AbortSignal.any([
      this.closing.signal,
      AbortSignal.timeout(this.options.sendTimeoutMs ?? RENAME_SEND_MS),
    ])
    try {
      await this.replayer.replay({ signal })
    } catch (error) {
      // Not sent now: it stays in the outbox, and the replay after the next sync sends it.
      this.options.logger.warn('a rename could not be sent yet', { err: error })
    }
  }

  /** The item as the person should see it: with the newest rename the service has not taken. */
  overlay(item: AssetItem): AssetItem {
    const last = this.renamesOf(item.id).at(-1)
    if (!last || last.write?.kind !== 'asset.rename') return item
    const pending: PendingRename = {
      state: last.state === 'rejected' ? 'refused' : 'waiting',
      name: last.write.name,
      message: last.lastError,
    }
    return {
      ...item,
      // A refused name is not the asset's: the service's stays, and the mark says why.
      name: pending.state === 'waiting' ? pending.name : item.name,
      pendingRename: pending,
    }
  }

  close(): void {
    this.closing.abort()
  }

  private renamesOf(assetId: string): OutboxItem[] {
    return this.replayer.pendingFor(assetId).filter((item) => item.kind === 'asset.rename')
  }
}
