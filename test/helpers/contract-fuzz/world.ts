import type { TestSandbox } from '../sandbox'
import type { FuzzWorld } from './fuzz-case'
import type { FuzzOperation } from './operations'
import { resolvePathValues } from './path-values'
import type { ContractSchemas } from './schemas'
import { seedOrganization } from './seed'
import { snapshotData } from './snapshot'

const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/gi

/**
 * Seeds the sandbox's organization and learns what cases are built from: existing path values,
 * every id in the data, the keys' organizations and scopes. `close` stops the seed's receiver.
 */
export async function buildWorld(
  sandbox: TestSandbox,
  operations: FuzzOperation[],
  schemas: ContractSchemas,
): Promise<{ world: FuzzWorld; close: () => Promise<void> }> {
  const seeded = await seedOrganization(sandbox)
  const paths = await resolvePathValues(sandbox, operations, seeded.knownValues)

  const knownIds = new Set<string>()
  const snapshot = snapshotData(sandbox.services)
  for (const rows of snapshot.tables.values()) {
    for (const row of rows.values()) {
      for (const id of row.match(UUID) ?? []) knownIds.add(id.toLowerCase())
    }
  }

  const account = async (key: string) => {
    const answer = await sandbox.call('GET', '/v1/account', { key })
    if (answer.status !== 200) throw new Error(`GET /v1/account answered ${answer.status}.`)
    return answer.body as { organizations?: { id: string }[]; scopes?: string[] }
  }
  const admin = await account(sandbox.keys.admin)
  const limited = await account(sandbox.keys.limited)
  const memberOrgIds = new Set(
    [sandbox.orgId, ...(admin.organizations ?? []).map((org) => org.id)].map((id) =>
      id.toLowerCase(),
    ),
  )

  const staticSegments = new Set<string>()
  for (const operation of operations) {
    for (const segment of operation.path.split('/')) {
      if (segment !== '' && !segment.startsWith('{')) staticSegments.add(segment)
    }
  }

  return {
    world: {
      schemas,
      adminKey: sandbox.keys.admin,
      otherKeys: [{ key: sandbox.keys.limited, scopes: new Set(limited.scopes ?? []) }],
      memberOrgIds,
      foreignOrgId: sandbox.otherOrgId,
      pathValues: paths.valuesOf,
      existingValues: paths.existingValues,
      knownIds,
      staticSegments,
      acceptedBodies: (operation) => {
        const route = new RegExp(`^${operation.path.replace(/{\w+}/g, '[^/]+')}$`)
        return seeded.acceptedBodies
          .filter((sent) => sent.method === operation.method && route.test(sent.path))
          .map((sent) => sent.body)
      },
    },
    close: seeded.close,
  }
}
