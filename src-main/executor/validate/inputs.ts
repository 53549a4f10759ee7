import type { FlowProblem } from '../../../src-shared/domain/flow'
import type { FlowDocument } from '../types'
import { show, typeProblem, validatorProblem } from './values'

/**
 * Checks the values a run is given for the flow's inputs (`atelier run --input name=value`),
 * keyed by flow input name: unknown names, required inputs left out (a default counts), types
 * and validators. Problems are placed at `input.<name>`, as the service places a run's.
 */
export function checkFlowInputs(
  flow: FlowDocument,
  values: Readonly<Record<string, unknown>>,
): FlowProblem[] {
  const problems: FlowProblem[] = []
  const known = new Map(flow.inputs.map((input) => [input.name, input]))
  for (const name of Object.keys(values)) {
    if (known.has(name)) continue
    problems.push({
      code: 'UNKNOWN_FLOW_INPUT',
      message: `The flow has no input named ${JSON.stringify(name)}; its inputs are: ${[...known.keys()].join(', ') || '(none)'}.`,
      path: `input.${name}`,
    })
  }
  for (const input of flow.inputs) {
    const path = `input.${input.name}`
    const value = values[input.name]
    if (value === undefined || value === null) {
      if (
        input.is_required &&
        (input.default_value === null || input.default_value === undefined)
      ) {
        problems.push({
          code: 'MISSING_REQUIRED_INPUT',
          message: `The flow input ${JSON.stringify(input.name)} is required; give it a value (--input ${input.name}=…).`,
          path,
        })
      }
      continue
    }
    const wanted = typeProblem(input.variable_type_code, value)
    if (wanted !== null) {
      problems.push({
        code: 'INVALID_VALUE',
        message: `The flow input ${JSON.stringify(input.name)} must be ${wanted}, but it is ${show(value)}.`,
        path,
      })
      continue
    }
    const problem = validatorProblem(input, value)
    if (problem !== null) {
      problems.push({
        code: 'VALIDATOR_VIOLATION',
        message: `The flow input ${JSON.stringify(input.name)} ${problem}.`,
        path,
      })
    }
  }
  return problems
}
