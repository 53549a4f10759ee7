// Friendly names for the service contract. The types come from schema.gen.ts, which
// `npm run gen:api` generates from resources/openapi.yaml; change the YAML, not the types.
// Type-only on purpose: this folder runs on both sides and must not import node:*, DOM or electron.
import type { components, operations } from './schema.gen'

export type { paths, components, operations, webhooks } from './schema.gen'

type Schemas = components['schemas']

/** Run statuses after which a run never changes again. */
export const RUN_TERMINAL_STATUSES = [
  'succeeded',
  'failed',
  'canceled',
] as const satisfies readonly Schemas['RunStatusCode'][]

/** The paginated list envelope around records of type T. */
export interface Page<T> {
  items: T[]
  first: string | null
  next: string | null
  previous: string | null
}

/** The six standard list parameters (q, limit, sort_by, fields, pq, from_prev). */
export type ListParams = NonNullable<operations['listRuns']['parameters']['query']>

/** The names in a `fields` value: `FieldNames<'name,status_code'>` is `'name' | 'status_code'`. */
export type FieldNames<Fields extends string> = Fields extends `${infer Name},${infer Rest}`
  ? Name | FieldNames<Rest>
  : Fields

/**
 * A record as a list asked with `fields` answers it: only the named fields, plus `id` when the
 * record has one. The generated page types describe whole records, which a projected item is not
 * (its other required fields are missing). Name the relations asked for with `include` (flows)
 * among the fields to keep them. When the fields are known only as `string`, any field but `id`
 * may be missing.
 */
export type Projected<T, Fields extends string> = string extends Fields
  ? Pick<T, 'id' & keyof T> & Partial<T>
  : Pick<T, (FieldNames<Fields> | 'id') & keyof T>

/** A page of a list asked with `fields`. */
export type ProjectedPage<T, Fields extends string> = Page<Projected<T, Fields>>

/**
 * The items a list answers for a query: whole records, or projections when the query may carry
 * `fields` (a query typed as ListParams may, so its items are projections of unknown fields).
 */
export type ListItem<T, Query> = Query extends { fields?: infer Fields }
  ? [Extract<Fields, string>] extends [never]
    ? T
    : Projected<T, Extract<Fields, string>>
  : T

/** Every operationId of the contract. */
export type OperationId = keyof operations

export type ErrorEnvelope = Schemas['Error']
export type ErrorDetail = Schemas['ErrorDetail']
export type ErrorCode = Schemas['ErrorCode']
export type ForbiddenCode = Schemas['ForbiddenCode']
export type ForbiddenError = Schemas['ForbiddenError']
export type Cursor = Schemas['Cursor']
export type Decimal = Schemas['Decimal']
export type UuidOrAny = Schemas['UuidOrAny']
export type ModelSlug = Schemas['ModelSlug']
export type CanvasCoordinate = Schemas['CanvasCoordinate']
export type NodeWidth = Schemas['NodeWidth']
export type NodeCollapsed = Schemas['NodeCollapsed']
export type SortOrder = Schemas['SortOrder']
export type JobClassCode = Schemas['JobClassCode']
export type UploadPartSize = Schemas['UploadPartSize']
export type Sha256 = Schemas['Sha256']
export type CallbackTimestamp = Schemas['CallbackTimestamp']
export type ReferenceRecord = Schemas['ReferenceRecord']
export type UserSummary = Schemas['UserSummary']
export type OrganizationSummary = Schemas['OrganizationSummary']
export type Balance = Schemas['Balance']
export type Account = Schemas['Account']
export type Health = Schemas['Health']
export type ReadinessComponent = Schemas['ReadinessComponent']
export type Readiness = Schemas['Readiness']
export type TombstoneCollection = Schemas['TombstoneCollection']
export type Tombstone = Schemas['Tombstone']
export type RunStatusCode = Schemas['RunStatusCode']
export type RunTerminalStatusCode = Schemas['RunTerminalStatusCode']
export type RunTargetTypeCode = Schemas['RunTargetTypeCode']
export type RunSourceCode = Schemas['RunSourceCode']
export type Run = Schemas['Run']
export type RunUpdate = Schemas['RunUpdate']
export type RunDispatch = Schemas['RunDispatch']
export type RunRerun = Schemas['RunRerun']
export type RunLog = Schemas['RunLog']
export type NodeRun = Schemas['NodeRun']
export type RunLogLevel = Schemas['RunLogLevel']
export type RunStatus = Schemas['RunStatus']
export type EventType = Schemas['EventType']
export type RunCallbackPayload = Schemas['RunCallbackPayload']
export type BatchCallbackItem = Schemas['BatchCallbackItem']
export type BatchCallbackOutput = Schemas['BatchCallbackOutput']
export type BatchCallbackPayload = Schemas['BatchCallbackPayload']
export type CallbackDeliveryStatusCode = Schemas['CallbackDeliveryStatusCode']
export type CallbackFailureReasonCode = Schemas['CallbackFailureReasonCode']
export type DeliveryAttempt = Schemas['DeliveryAttempt']
export type RunCallbackDelivery = Schemas['RunCallbackDelivery']
export type BatchCallbackDelivery = Schemas['BatchCallbackDelivery']
export type MediaType = Schemas['MediaType']
export type AssetStatusCode = Schemas['AssetStatusCode']
export type Asset = Schemas['Asset']
export type AssetUpdate = Schemas['AssetUpdate']
export type AssetFolder = Schemas['AssetFolder']
export type AssetFolderCreate = Schemas['AssetFolderCreate']
export type AssetFolderUpdate = Schemas['AssetFolderUpdate']
export type AssetUploadStatusCode = Schemas['AssetUploadStatusCode']
export type PresignedPart = Schemas['PresignedPart']
export type AssetUpload = Schemas['AssetUpload']
export type AssetUploadCreate = Schemas['AssetUploadCreate']
export type AssetUploadPartsRequest = Schemas['AssetUploadPartsRequest']
export type AssetUploadConfirmation = Schemas['AssetUploadConfirmation']
export type BatchStatusCode = Schemas['BatchStatusCode']
export type BatchItem = Schemas['BatchItem']
export type Batch = Schemas['Batch']
export type BatchCreate = Schemas['BatchCreate']
export type EvaluationStatusCode = Schemas['EvaluationStatusCode']
export type EvaluationIssue = Schemas['EvaluationIssue']
export type EvaluationGateFailure = Schemas['EvaluationGateFailure']
export type EvaluationAction = Schemas['EvaluationAction']
export type EvaluationJudge = Schemas['EvaluationJudge']
export type Evaluation = Schemas['Evaluation']
export type EvaluationCreate = Schemas['EvaluationCreate']
export type FeedbackPatch = Schemas['FeedbackPatch']
export type EvaluationStatus = Schemas['EvaluationStatus']
export type WebhookEventSubscription = Schemas['WebhookEventSubscription']
export type Webhook = Schemas['Webhook']
export type WebhookCreate = Schemas['WebhookCreate']
export type WebhookUpdate = Schemas['WebhookUpdate']
export type WebhookEventType = Schemas['WebhookEventType']
export type WebhookDeliveryAttempt = Schemas['WebhookDeliveryAttempt']
export type WebhookDelivery = Schemas['WebhookDelivery']
export type CallbackSecretCreate = Schemas['CallbackSecretCreate']
export type CallbackSecretCreated = Schemas['CallbackSecretCreated']
export type ModelInput = Schemas['ModelInput']
export type ModelOutput = Schemas['ModelOutput']
export type ModelExample = Schemas['ModelExample']
export type ModelFaqEntry = Schemas['ModelFaqEntry']
export type ModelPricing = Schemas['ModelPricing']
export type ModelRelatedLink = Schemas['ModelRelatedLink']
export type Model = Schemas['Model']
export type ModelStats = Schemas['ModelStats']
export type ModelCreator = Schemas['ModelCreator']
export type ModelFamily = Schemas['ModelFamily']
export type FlowInput = Schemas['FlowInput']
export type FlowOutput = Schemas['FlowOutput']
export type FlowNodeInput = Schemas['FlowNodeInput']
export type FlowNodeOutput = Schemas['FlowNodeOutput']
export type FlowNode = Schemas['FlowNode']
export type FlowStar = Schemas['FlowStar']
export type Flow = Schemas['Flow']
export type FlowNodeInputCreate = Schemas['FlowNodeInputCreate']
export type FlowNodeOutputCreate = Schemas['FlowNodeOutputCreate']
export type FlowNodeCreate = Schemas['FlowNodeCreate']
export type FlowInputCreate = Schemas['FlowInputCreate']
export type FlowOutputCreate = Schemas['FlowOutputCreate']
export type FlowCreate = Schemas['FlowCreate']
export type FlowUpdate = Schemas['FlowUpdate']
export type FlowGraph = Schemas['FlowGraph']
export type FlowSummary = Schemas['FlowSummary']
export type WorkflowInput = Schemas['WorkflowInput']
export type WorkflowOutput = Schemas['WorkflowOutput']
export type Workflow = Schemas['Workflow']
export type WorkflowInputCreate = Schemas['WorkflowInputCreate']
export type WorkflowOutputCreate = Schemas['WorkflowOutputCreate']
export type WorkflowCreate = Schemas['WorkflowCreate']
export type WorkflowUpdate = Schemas['WorkflowUpdate']
export type BuiltinNodeInput = Schemas['BuiltinNodeInput']
export type BuiltinNodeOutput = Schemas['BuiltinNodeOutput']
export type BuiltinNode = Schemas['BuiltinNode']
export type SolutionFlowLink = Schemas['SolutionFlowLink']
export type ModelSolutionLink = Schemas['ModelSolutionLink']
export type SolutionWorkflowLink = Schemas['SolutionWorkflowLink']
export type Solution = Schemas['Solution']
