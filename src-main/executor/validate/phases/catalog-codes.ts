import { listElement } from '../../../../src-shared/domain/flow'
import type { AnalysisContext, Place } from './context'

interface Coded {
  variable_type_code: string
  validator_code: string | null
}

/**
 * Every type and validator code the flow writes is one the catalog knows (when it knows any).
 * Later phases compare types by their rules alone, so a typo'd type is named here, once, rather
 * than as a mismatch at every edge it touches.
 */
export function checkCatalogCodes(context: AnalysisContext): void {
  const { flow, nodes, catalog, report } = context
  const typeCodes = new Set(catalog.variableTypes().map((record) => record.code))
  const validatorCodes = new Set(catalog.validators().map((record) => record.code))
  const typeKnown = (code: string): boolean => {
    if (typeCodes.size === 0 || typeCodes.has(code)) return true
    const element = listElement(code)
    return element !== null && typeKnown(element)
  }
  const checkCodes = (record: Coded, path: string, place: Place) => {
    if (!typeKnown(record.variable_type_code)) {
      report(
        'UNKNOWN_TYPE',
        `${path}.variable_type_code`,
        `${path}.variable_type_code ${JSON.stringify(record.variable_type_code)} is not a variable type of the catalog; use one of ${[...typeCodes].join(', ')} (or a list of one, such as image[]).`,
        place,
      )
    }
    const validator = record.validator_code
    if (validator !== null && validatorCodes.size > 0 && !validatorCodes.has(validator)) {
      report(
        'UNKNOWN_VALIDATOR',
        `${path}.validator_code`,
        `${path}.validator_code ${JSON.stringify(validator)} is not a validator of the catalog; use one of ${[...validatorCodes].join(', ')}, or none.`,
        place,
      )
    }
  }
  flow.inputs.forEach((input, k) => {
    checkCodes(input, `inputs.${k}`, {})
  })
  flow.outputs.forEach((output, k) => {
    checkCodes(output, `outputs.${k}`, {})
  })
  nodes.forEach((node, i) => {
    node.inputs.forEach((input, j) => {
      checkCodes(input, `nodes.${i}.inputs.${j}`, { nodeId: node.id, inputName: input.name })
    })
    node.outputs.forEach((output, j) => {
      checkCodes(output, `nodes.${i}.outputs.${j}`, { nodeId: node.id, outputId: output.id })
    })
  })
}
