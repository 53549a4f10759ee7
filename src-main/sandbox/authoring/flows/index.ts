import type { Handlers } from '../../handlers/types'
import type { SandboxServices } from '../../services'
import { flowAccess } from './access'
import { flowPartLists } from './part-lists'
import { flowReads } from './reads'
import { flowWrites } from './writes'

/**
 * Every flow operation's handler. The groups share one `FlowAccess`, so they look flows and
 * nodes up alike; see `stored-graph.ts` for how a flow's graph and its part records stay in step.
 */
export function flowHandlers(services: SandboxServices): Handlers {
  const access = flowAccess(services)
  return {
    ...flowReads(access),
    ...flowWrites(access),
    ...flowPartLists(access),
  }
}
