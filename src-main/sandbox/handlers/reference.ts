import type { Handlers } from './types'
import { getOne, listOf } from './common'

/** Reference tables are global records keyed by code: `catalog:<name>` collections. */
function referenceTable(collection: string, schema: string, what: string) {
  return {
    list: listOf({ collection, schema, includeGlobal: true, defaultSort: 'sort_order:asc' }),
    get: getOne({ collection, idParam: 'code', what, includeGlobal: true }),
  }
}

const runTargetTypes = referenceTable(
  'catalog:run-target-types',
  'ReferenceRecord',
  'The target type',
)
const runSources = referenceTable('catalog:run-sources', 'ReferenceRecord', 'The run source')
const runStatuses = referenceTable('catalog:run-statuses', 'RunStatus', 'The run status')
const runLogLevels = referenceTable('catalog:run-log-levels', 'RunLogLevel', 'The log level')
const evaluationStatuses = referenceTable(
  'catalog:evaluation-statuses',
  'EvaluationStatus',
  'The evaluation status',
)
const sections = referenceTable('catalog:solution-sections', 'ReferenceRecord', 'The section')
const eventTypes = referenceTable('catalog:event-types', 'WebhookEventType', 'The event type')
const modelTypes = referenceTable('catalog:model-types', 'ReferenceRecord', 'The model type')
const pricingDimensions = referenceTable(
  'catalog:pricing-dimensions',
  'ReferenceRecord',
  'The pricing dimension',
)
const ruleEffects = referenceTable('catalog:rule-effects', 'ReferenceRecord', 'The rule effect')
const units = referenceTable('catalog:units', 'ReferenceRecord', 'The unit')
const validators = referenceTable('catalog:validators', 'ReferenceRecord', 'The validator')
const behaviors = referenceTable(
  'catalog:variable-behaviors',
  'ReferenceRecord',
  'The variable behavior',
)
const variableTypes = referenceTable(
  'catalog:variable-types',
  'ReferenceRecord',
  'The variable type',
)

export const referenceHandlers: Handlers = {
  listRunTargetTypes: runTargetTypes.list,
  getRunTargetType: runTargetTypes.get,
  listRunSources: runSources.list,
  getRunSource: runSources.get,
  listRunStatuses: runStatuses.list,
  getRunStatus: runStatuses.get,
  listRunLogLevels: runLogLevels.list,
  getRunLogLevel: runLogLevels.get,
  listEvaluationStatuses: evaluationStatuses.list,
  getEvaluationStatus: evaluationStatuses.get,
  listSolutionSections: sections.list,
  getSolutionSection: sections.get,
  listWebhookEventTypes: eventTypes.list,
  getWebhookEventType: eventTypes.get,
  listModelTypes: modelTypes.list,
  getModelType: modelTypes.get,
  listPricingDimensions: pricingDimensions.list,
  getPricingDimension: pricingDimensions.get,
  listRuleEffects: ruleEffects.list,
  getRuleEffect: ruleEffects.get,
  listUnits: units.list,
  getUnit: units.get,
  listValidators: validators.list,
  getValidator: validators.get,
  listVariableBehaviors: behaviors.list,
  getVariableBehavior: behaviors.get,
  listVariableTypes: variableTypes.list,
  getVariableType: variableTypes.get,
}
