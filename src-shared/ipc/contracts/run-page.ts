import { z } from 'zod'
import {
  runPageSchemas as s,
  type RerunStarted,
  type RunDetail,
  type RunLogPage,
  type RunRefresh,
  type SignatureCheck,
} from '../../domain/run-page'
import type { RunCallbackDelivery } from '../../api'
import { channel } from '../channel'

/** The run page's channels of the IPC contract (issue 8: one run, its deliveries, compare). */
export const runPageContract = {
  /** One run from the mirror, at once and offline; NOT_FOUND when it was never synced. */
  'runs.get': channel<RunDetail>()(s.run),
  /**
   * Asks the service for the run and, when they changed or were never fetched, its node runs,
   * logs and deliveries; answers the mirror's detail with `refreshed: false` when offline.
   */
  'runs.refresh': channel<RunRefresh>()(s.run),
  /** The log lines after a page's `next`. */
  'runs.logs': channel<RunLogPage>()(s.logs),
  /** Cancels a queued or running run; CONFLICT once it has finished. */
  'runs.cancel': channel<RunDetail>()(s.run),
  /**
   * A new run with the same target and input: it runs, and is charged, again. `seed`: `same`
   * (the default) keeps the run's seed, so the same picture comes back; `new` draws another.
   */
  'runs.rerun': channel<RerunStarted>()(
    s.rerun.extend({ seed: z.enum(['same', 'new']).optional() }),
  ),
  /** Sends the run's callback again: a new delivery, whose attempts follow. */
  'deliveries.redeliver': channel<RunCallbackDelivery[]>()(s.redeliver),
  /** Checks a received signature against a delivery's bytes; the secret never comes back. */
  'deliveries.verify': channel<SignatureCheck>()(s.verify),
} as const
