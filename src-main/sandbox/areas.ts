import { createCoreArea } from './core-area'
import type { SandboxArea, SandboxServices } from './services'

/** Every area of the service; together their handlers cover every operation of the contract. */
export function createAreas(services: SandboxServices): SandboxArea[] {
  return [createCoreArea(services)]
}
