import type { SandboxArea, SandboxServices } from '../services'

// Placeholder while the area is being written; replaced by the area's real factory.
export function createEvaluationsArea(_services: SandboxServices): SandboxArea {
  return { handlers: {} }
}
