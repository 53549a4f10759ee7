import { KNOWN_VARIABLE_TYPES } from '../../../../src-shared/domain/flow'
import { TYPING_MERGE_MS } from '../../store'

/** The types a flow port can be given here: the ones the connection rules know, and lists. */
export const PORT_TYPES = [...KNOWN_VARIABLE_TYPES, 'image[]', 'text[]']

/** Typing into one field: one undo step, however many keys (see `editDoc`). */
export const typing = (key: string) => ({ key, windowMs: TYPING_MERGE_MS })
