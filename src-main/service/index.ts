export {
  createServiceClient,
  type Call,
  type CallOptions,
  type InitFor,
  type ItemOf,
  type ListPath,
  type PathFor,
  type ResultOf,
  type ServiceClient,
  type ServiceClientOptions,
  type Verb,
} from './client'
export {
  isServiceError,
  ServiceError,
  type ClientErrorCode,
  type FieldError,
  type ServiceErrorCode,
  type ServiceErrorFields,
} from './errors'
export { newIdempotencyKey } from './idempotency'
export {
  paginate,
  paginatePages,
  type FetchPage,
  type Page,
  type PaginateOptions,
} from './pagination'
export { redact, redactDeep, REDACTED } from '../log/redact'
export { DEFAULT_RETRY_POLICY, SPEC_MAX_ATTEMPTS, type RetryPolicy, type Sleep } from './retry'
export type { AuthHeader, RequestLog, RetryInfo } from './transport'
