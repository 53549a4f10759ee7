import { createAuthoringArea } from './authoring'
import { createCoreArea } from './core-area'
import { createDeliveriesArea } from './deliveries'
import { createEvaluationsArea } from './evaluations'
import { withCanonicalIds } from './handlers/canonical-ids'
import { createMediaArea } from './media'
import { createRunsArea, presentRun } from './runs'
import type { SandboxArea } from './handlers/types'
import type { SandboxServices } from './services'

/**
 * Every area of the service; together their handlers cover every operation of the contract. Each
 * handler sees the request's ids in canonical form (see `withCanonicalIds`).
 */
export function createAreas(services: SandboxServices): SandboxArea[] {
  const areas = [
    createCoreArea(services),
    createRunsArea(services),
    createDeliveriesArea(services),
    createMediaArea(services),
    // The evaluations area shows an evaluation's run as the runs area does, without importing it.
    createEvaluationsArea(services, presentRun),
    createAuthoringArea(services),
  ]
  for (const area of areas) area.handlers = withCanonicalIds(services.contract, area.handlers)
  return areas
}
