import { remixSchemas, type RemixInspection, type RemixOpened } from '../../domain/remix'
import { channel } from '../channel'

/** Remix (issue 20): the flow that made a picture, opened in the editor as it ran. */
export const remixContract = {
  /**
   * The flow as it ran, stored as a new flow or a new version of the original; a ComfyUI file
   * with no record of ours is imported as a workflow instead. NO_PROVENANCE, PROVENANCE_DAMAGED,
   * PROVENANCE_FOREIGN when there is nothing to trust; a changed picture opens, with a note.
   */
  'remix.open': channel<RemixOpened>()(remixSchemas.open),
  /** What the record says (flow, seed, model, run), for the dialog that asks how to open it. */
  'remix.inspect': channel<RemixInspection>()(remixSchemas.inspect),
} as const
