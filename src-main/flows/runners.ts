import type { Ledger, Mirror } from '../db'
import {
  BuiltinRunner,
  mirrorDurations,
  mirrorModels,
  RemoteRunner,
  type FlowRunners,
} from '../executor'
import type { MediaStore } from '../media-store'
import { provenanceOfMedia } from '../provenance/records'
import type { ServiceClient } from '../service'

export interface RunnerSources {
  client: ServiceClient
  ledger: Ledger
  mirror: Mirror
  media: MediaStore
  profile: string
  orgId: string
}

/**
 * The runners a flow run on this machine uses, the same for the editor and `atelier run`: model
 * and workflow-engine nodes go to the service (with the ledger's guarantee of one payment), the
 * built-ins run here, and "Save to assets" writes each picture's record into the file it saves.
 */
export function flowRunners(sources: RunnerSources): FlowRunners {
  const { client, ledger, mirror, media, profile, orgId } = sources
  const remote = new RemoteRunner({
    client,
    ledger,
    profile,
    orgId,
    models: mirrorModels(mirror, orgId),
    durations: mirrorDurations(mirror, orgId),
  })
  return {
    model: remote,
    wfengine_workflow: remote,
    builtin: new BuiltinRunner({
      media,
      service: client,
      recordOf: (sha256, flowRunId) =>
        provenanceOfMedia({ ledger, mirror, media }, sha256, flowRunId),
    }),
  }
}
