import type { Migration } from '../../migrate'
import { runIntentsAndOutbox } from './0001-intents-and-outbox'
import { uploadManifests } from './0002-uploads'
import { outboxAnswers } from './0003-outbox-answers'
import { flowRuns } from './0004-flow-runs'
import { localFlows } from './0005-local-flows'
import { namedFileUploads } from './0006-named-files'
import { flowDocuments } from './0007-flow-documents'

/**
 * The ledger's schema: what only this machine knows and the service cannot give back — run
 * intents, upload manifests, the outbox of offline writes. Nothing here is ever rebuilt or
 * dropped to make room; a step that reshapes a table copies every row.
 *
 * One file per step, numbered as its version. Append-only: never edit a step that has shipped
 * (its hash is recorded in every database it reached, and an edited step is refused on open);
 * add a new file and append it here.
 *
 * State columns are plain text checked by the repositories, except the outbox's, whose three
 * states are the contract of replay: a CHECK there costs a rebuild to extend, elsewhere it would
 * only slow the executor and the uploader down when they grow a state.
 */
export const LEDGER_MIGRATIONS: readonly Migration[] = [
  runIntentsAndOutbox,
  uploadManifests,
  outboxAnswers,
  flowRuns,
  localFlows,
  namedFileUploads,
  flowDocuments,
]
