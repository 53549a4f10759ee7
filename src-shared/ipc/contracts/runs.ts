import { z } from 'zod'
import { runListQuerySchema, type RunFilterOptions, type RunListPage } from '../../domain/runs-list'
import { channel } from '../channel'

/** The runs channels of the IPC contract (issue 8), spread into `ipcContract`. */
export const runsContract = {
  /** The Runs section's list from the mirror: newest first, filtered, keyset-paged. */
  'runs.list': channel<RunListPage>()(runListQuerySchema),
  /** The models and flows the mirror's runs were made with, for the filter bar. */
  'runs.filterOptions': channel<RunFilterOptions>()(z.undefined()),
} as const
