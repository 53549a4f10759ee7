import type { IpcParsedArgs, IpcValue } from '../../../src-shared/ipc'
import type { EVALUATIONS_CHANNELS } from '../../../src-shared/ipc/channels/evaluations'
import { isOutboxError } from '../../outbox'
import { isEvaluationReviewError } from '../../review/evaluations'
import { isSearchError } from '../../search'
import { coreOf, type Awaitable, type HandlerDeps } from '../core-access'
import { IpcHandlerError, type IpcHandlers } from '../dispatch'

type Channel = (typeof EVALUATIONS_CHANNELS)[number]
type Method<C extends Channel> = (args: IpcParsedArgs<C>) => Awaitable<IpcValue<C>>

/** What the evaluations channels call on the core (`EvaluationReview` fits). */
export interface EvaluationsControl {
  list: Method<'evaluations.list'>
  get: Method<'evaluations.get'>
  refresh: Method<'evaluations.refresh'>
  feedback: Method<'evaluations.feedback'>
  submit: Method<'evaluations.submit'>
}

/** Calls the review, turning its own errors into the channel's error. */
async function review<T>(
  deps: HandlerDeps,
  call: (evaluations: EvaluationsControl) => Awaitable<T>,
): Promise<T> {
  const evaluations = coreOf(deps).evaluations
  if (!evaluations) {
    throw new IpcHandlerError('UNAVAILABLE', 'The evaluations are not available in this window.')
  }
  try {
    return await call(evaluations)
  } catch (error) {
    if (isEvaluationReviewError(error) || isOutboxError(error) || isSearchError(error)) {
      throw new IpcHandlerError(error.code, error.message)
    }
    throw error
  }
}

export function evaluationsHandlers(deps: HandlerDeps): Pick<IpcHandlers, Channel> {
  return {
    'evaluations.list': (args) => review(deps, (e) => e.list(args)),
    'evaluations.get': (args) => review(deps, (e) => e.get(args)),
    'evaluations.refresh': (args) => review(deps, (e) => e.refresh(args)),
    'evaluations.feedback': (args) => review(deps, (e) => e.feedback(args)),
    'evaluations.submit': (args) => review(deps, (e) => e.submit(args)),
  }
}
