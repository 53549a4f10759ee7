/**
 * The read-only reference tables the service serves besides the model catalogs: run target
 * types, sources, statuses and log levels, evaluation statuses, solution sections and webhook
 * event types. Timestamps are fixed so that the tables look the same on every start.
 */
export interface ReferenceRecord {
  code: string
  display_name: string
  description: string | null
  sort_order: number
  is_active: boolean
  created_at: string
  updated_at: string
  [extra: string]: unknown
}

const STAMP = '2026-01-01T00:00:00.000+00:00'

export function reference(
  rows: readonly (readonly [code: string, name: string, description: string, extra?: object])[],
): ReferenceRecord[] {
  return rows.map(([code, display_name, description, extra], index) => ({
    code,
    display_name,
    description,
    sort_order: index,
    is_active: true,
    created_at: STAMP,
    updated_at: STAMP,
    ...extra,
  }))
}

export const RUN_TARGET_TYPES = reference([
  ['model', 'Model', 'A run of one model.'],
  ['flow', 'Flow', 'A run of a flow, with one node run per node.'],
  ['wfengine_workflow', 'Workflow', 'A run of a workflow-engine workflow.'],
])

export const RUN_SOURCES = reference([
  ['api', 'API', 'Dispatched through the API.'],
  ['platform', 'Platform', 'Started from the service’s own interface.'],
  ['rerun', 'Re-run', 'A re-run of an earlier run.'],
  ['batch', 'Batch', 'One item of a batch.'],
])

export const RUN_STATUSES = reference([
  ['queued', 'Queued', 'Accepted, waiting for a worker.', { is_terminal: false }],
  ['starting', 'Starting', 'A worker is loading the model.', { is_terminal: false }],
  ['running', 'Running', 'The model is working.', { is_terminal: false }],
  ['succeeded', 'Succeeded', 'Finished with outputs.', { is_terminal: true }],
  ['failed', 'Failed', 'Finished without outputs; see failure_code.', { is_terminal: true }],
  ['canceled', 'Canceled', 'Stopped before it finished.', { is_terminal: true }],
])

export const RUN_LOG_LEVELS = reference([
  ['debug', 'Debug', 'Details for troubleshooting.', { color: '#8e8e99' }],
  ['info', 'Info', 'What the run is doing.', { color: '#3b82f6' }],
  ['warning', 'Warning', 'Something to look at; the run goes on.', { color: '#d97706' }],
  ['error', 'Error', 'Something failed.', { color: '#d32f2f' }],
])

export const EVALUATION_STATUSES = reference([
  ['pending', 'Pending', 'Submitted, waiting to be evaluated.', { is_terminal: false }],
  ['running', 'Running', 'The judges are at work.', { is_terminal: false }],
  ['completed', 'Completed', 'A verdict is ready.', { is_terminal: true }],
  ['failed', 'Failed', 'No verdict; see failure_code.', { is_terminal: true }],
])

export const SOLUTION_SECTIONS = reference([
  ['getting-started', 'Getting started', 'Small flows to learn the studio with.'],
  ['images', 'Images', 'Generate, edit and upscale images.'],
  ['video', 'Video', 'Short animated clips from prompts.'],
])

export const EVENT_TYPES = [
  ['run.completed', 'Run completed', 'A run reached status succeeded.', 'RunCallbackPayload'],
  ['run.failed', 'Run failed', 'A run reached status failed.', 'RunCallbackPayload'],
  [
    'run.cancelled',
    'Run cancelled',
    'A run was cancelled (admin or automatic).',
    'RunCallbackPayload',
  ],
  [
    'run.partial_succeeded',
    'Batch partly succeeded',
    'A batch run finished with at least one failed item.',
    'BatchCallbackPayload',
  ],
  [
    'batch.succeeded',
    'Batch succeeded',
    'Every item of a batch succeeded.',
    'BatchCallbackPayload',
  ],
] as const
