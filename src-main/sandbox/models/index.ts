// The sandbox's model catalog and its procedural models. Pure and I/O-free: the server stores the
// catalog records and calls the generators; nothing here touches a database or the network.

export { MODEL_CATALOG, MODEL_CREATORS, MODEL_FAMILIES, findModel } from './catalog'
export {
  CATALOGS,
  MODEL_TYPE_CODES,
  PRICING_DIMENSION_CODES,
  PRICING_MODEL_CODES,
  RULE_EFFECT_CODES,
  UNIT_CODES,
  VALIDATOR_CODES,
  VARIABLE_BEHAVIOR_CODES,
  VARIABLE_TYPE_CODES,
  isCatalogCode,
  type CatalogName,
  type ModelTypeCode,
  type PricingDimensionCode,
  type PricingModelCode,
  type RuleEffectCode,
  type UnitCode,
  type ValidatorCode,
  type VariableBehaviorCode,
  type VariableTypeCode,
} from './codes'
export { decodeDataUrl, DEFAULT_FAILURE_RATE, runModel } from './generators'
export { CATALOG_TIMESTAMP, catalogId, uuidV5 } from './ids'
export { predictMetrics, videoTiming } from './measure'
export { decimalToMicro, estimateCost, microToDecimal, priceMetrics, priceRun } from './pricing'
export type {
  CatalogModel,
  InputProblem,
  InputValidation,
  LogLevelCode,
  ModelFailure,
  ModelFile,
  ModelLog,
  ModelMetrics,
  ModelResult,
  ModelSuccess,
  RunCost,
  RunOptions,
} from './types'
export { imageSizeProblem, validateInput } from './validate'
export { colourName, type Rgb } from './colour'
