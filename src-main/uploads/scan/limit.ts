/**
 * Runs `work` on every item, at most `limit` at once, and stops starting new ones once the
 * signal is aborted. libuv reads the disk on 4 threads by default, so a few more in flight keep
 * them busy without thousands of pending calls for a 100,000-file folder.
 */
export async function eachLimited<T>(
  items: readonly T[],
  limit: number,
  signal: AbortSignal | undefined,
  work: (item: T, index: number) => Promise<void>,
): Promise<void> {
  let next = 0
  const worker = async (): Promise<void> => {
    while (next < items.length && !signal?.aborted) {
      const index = next++
      await work(items[index] as T, index)
    }
  }
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker))
}
