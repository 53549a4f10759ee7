import { createAuthoringArea } from './authoring'
import { createCoreArea } from './core-area'
import { createDeliveriesArea } from './deliveries'
import { createEvaluationsArea } from './evaluations'
import { createMediaArea } from './media'
import { createRunsArea } from './runs'
import type { SandboxArea, SandboxServices } from './services'

/** Every area of the service; together their handlers cover every operation of the contract. */
export function createAreas(services: SandboxServices): SandboxArea[] {
  return [
    createCoreArea(services),
    createRunsArea(services),
    createDeliveriesArea(services),
    createMediaArea(services),
    createEvaluationsArea(services),
    createAuthoringArea(services),
  ]
}
