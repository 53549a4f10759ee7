/**
 * One run's page (issue 8): the run with its input, output, logs, node runs, deliveries, cost,
 * failure and the local flow that started it; cancel, re-run, redeliver and the signature check.
 * One entry point, `RunPageService`, wired into the core as `runPage`.
 *
 * Decisions, and why:
 *
 * - Mirror first: `get` reads the mirror only (small indexed reads, logs a page of 500 at a
 *   time), so the page opens at once and offline. The page then asks `refresh`, which reads the
 *   run from the service and fetches its node runs, logs and deliveries only when they are not
 *   current (never fetched, fetched at another version of the run, the run unfinished), or just
 *   the callback list while a delivery is under way. The page asks again (it polls while the run
 *   or a delivery is unfinished) rather than being pushed to: a refresh answers the new detail,
 *   so there is no event to keep in step with.
 * - Offline (the sync says so) `refresh` does not wait on the client's retries: it answers the
 *   mirror's detail with `refreshed: false` and why. Any other service error does the same when
 *   the mirror holds the run, so the page keeps what it shows.
 * - Re-run takes the idempotency key from the page, made once per confirmation: a retry or a
 *   double click cannot start, and charge, a second run.
 * - Signatures: a delivery record keeps the exact bytes that were signed but not the signature,
 *   so the check takes the `Service-Signature` a receiver got and a secret, pasted or remembered
 *   in the OS keychain under the callback URL (account `callback-secret:<url>`: profile names
 *   cannot hold a colon). HMAC-SHA256, compared in constant time. The secret is never answered,
 *   logged or written to a database.
 */
export { RunPageService, callbackSecretAccount, type RunPageOptions } from './service'
export { RunPageError, isRunPageError, type RunPageErrorCode } from './errors'
export { signatureMatches } from './signature'
export { LOG_PAGE_LIMIT } from './detail'
