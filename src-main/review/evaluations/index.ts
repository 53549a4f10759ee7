/**
 * The Evaluations section's main-process side: `new EvaluationReview({ databases, client,
 * profile, orgId, isOffline })`, wired into the core as `evaluations` and reached through the
 * `evaluations.*` channels.
 *
 * Decisions, and why:
 *
 * - The mirror first: the list, the page and the chain of attempts are read from the local
 *   copy, so they are instant and work offline. Each read is a page along an index (keyset on
 *   created time and seq), or rows by id; `refresh` reads one evaluation from the service into
 *   the mirror for a page that wants the newest copy (a pending evaluation being judged).
 * - Words are searched with the offline search (`src-main/search`), which filters status,
 *   verdict and a given rating in the same statement; the score range and "any rating" are
 *   checked on the rows found, reading at most a few search pages per call to fill a page.
 * - The chain of attempts: parents by `parent_evaluation_id` (the mirror's key); newer attempts
 *   by `links.superseded_by`, else among the same run's evaluations, else among a bounded number
 *   of newer ones, as the mirror has no index on the parent and needs no migration for this.
 * - Feedback goes through the outbox (`evaluation.feedback`), never straight to the service:
 *   the rating is stored first, then sent at once when the service answers within a few
 *   seconds. Otherwise it stays pending, shown over the mirror's rating, until the replay after
 *   the next sync sends it; the service's answer then replaces the mirror's copy. A new rating
 *   drops one the service refused, and a change of mind while one waits is queued after it.
 * - Submitting needs the service (it charges credit, and the outbox has no kind for it):
 *   offline it fails with OFFLINE. A local file is uploaded as an asset first (presigned parts;
 *   bytes the organization already has are found by sha256 and not sent), then evaluated by
 *   `asset_id`, since the service fetches a `generated_image_url` itself.
 * - The picture: an asset's or a run output's sha256, so the window shows it through
 *   `media.preview` from the media store, offline too; a bare URL is only named.
 */
export { EvaluationReview, type EvaluationReviewOptions } from './review'
export { EvaluationReviewError, isEvaluationReviewError } from './errors'
export { uploadImage, type UploadedImage } from './upload'
