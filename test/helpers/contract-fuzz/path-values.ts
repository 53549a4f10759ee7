import type { TestSandbox } from '../sandbox'
import type { FuzzOperation } from './operations'

export interface PathValues {
  /** Values of existing records for every path parameter of the operation. */
  valuesOf: (operation: FuzzOperation) => Record<string, string>
  /** Every value the list that a path parameter is taken from holds (existing codes, ids). */
  existingValues: (operation: FuzzOperation, parameter: string) => ReadonlySet<string>
}

type Item = Record<string, unknown>

/**
 * Finds, for each operation, path values that name real records, from the contract's own lists:
 * the value of `{x}` in `/a/{x}/b` is an item of `GET /a` (its `code` for a `{code}`, else its
 * `id`), with the values before it filled in, backtracking when a deeper list is empty. The
 * organization's own records come first (a public catalog record may not be changed by anyone).
 * `known` gives the values no list holds (an upload; the two halves of a model slug).
 */
export async function resolvePathValues(
  sandbox: TestSandbox,
  operations: FuzzOperation[],
  known: Record<string, string>,
): Promise<PathValues> {
  const lists = new Map<string, Item[]>()
  const list = async (path: string): Promise<Item[]> => {
    let items = lists.get(path)
    if (!items) {
      const answer = await sandbox.call('GET', `${path}?limit=500`)
      const body = answer.body as { items?: unknown } | undefined
      items = answer.status === 200 && Array.isArray(body?.items) ? (body.items as Item[]) : []
      lists.set(path, items)
    }
    return items
  }
  const keyOf = (parameter: string) => (parameter === 'code' ? 'code' : 'id')
  const own = (items: Item[]) => [
    ...items.filter((item) => item.org_id === sandbox.orgId),
    ...items.filter((item) => item.org_id !== sandbox.orgId),
  ]

  // The slug's halves: every model's provider and name, for "a model that does not exist".
  const models = await list('/v1/models')
  const slugParts = { provider: new Set<string>(), model: new Set<string>() }
  for (const model of models) {
    const [provider, name] = String(model.slug).split('/')
    if (provider) slugParts.provider.add(provider)
    if (name) slugParts.model.add(name)
  }

  const resolved = new Map<string, Record<string, string>>()
  const existing = new Map<string, Set<string>>()
  for (const operation of operations) {
    if (resolved.has(operation.path)) continue
    const segments = operation.path.split('/')
    const walk = async (
      index: number,
      filled: Record<string, string>,
    ): Promise<Record<string, string> | null> => {
      if (index === segments.length) return filled
      const name = /^{(\w+)}$/.exec(segments[index] ?? '')?.[1]
      if (!name) return walk(index + 1, filled)
      const knownValue = known[name]
      if (knownValue !== undefined) {
        const parts = (slugParts as Record<string, Set<string> | undefined>)[name]
        existing.set(`${operation.path} ${name}`, new Set([knownValue, ...(parts ?? [])]))
        return walk(index + 1, { ...filled, [name]: knownValue })
      }
      const prefix = segments
        .slice(0, index)
        .map((segment) => segment.replace(/^{(\w+)}$/, (_, n: string) => filled[n] ?? ''))
        .join('/')
      const items = own(await list(prefix))
      existing.set(
        `${operation.path} ${name}`,
        new Set(items.map((item) => String(item[keyOf(name)]))),
      )
      for (const item of items.slice(0, 5)) {
        const value = item[keyOf(name)]
        if (typeof value !== 'string') continue
        const found = await walk(index + 1, { ...filled, [name]: value })
        if (found) return found
      }
      return null
    }
    const values = await walk(0, {})
    if (!values) {
      throw new Error(
        `No existing record for the path ${operation.path}: the seed must make one, or give its value.`,
      )
    }
    resolved.set(operation.path, values)
  }

  return {
    valuesOf: (operation) => resolved.get(operation.path) ?? {},
    existingValues: (operation, parameter) =>
      existing.get(`${operation.path} ${parameter}`) ?? new Set(),
  }
}
