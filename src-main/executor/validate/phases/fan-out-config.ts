import { nodeName, type AnalysisContext } from './context'

/**
 * `config.fan_out`: the inputs a model node runs once per item of, said outright. Read before
 * ports and types, which ask `mayFanOut` whether a list reaching an input may fan out there: on a
 * model node, only into the inputs this names when it names any.
 */
export function readFanOutConfig(context: AnalysisContext): void {
  const { nodes, report } = context
  context.explicitFanOut = nodes.map((node, i): ReadonlySet<string> | null => {
    const names = node.config.fan_out
    if (names === undefined || names === null) return null
    const path = `nodes.${i}.config.fan_out`
    if (!Array.isArray(names) || !names.every((name) => typeof name === 'string')) {
      report(
        'INVALID_CONFIG',
        path,
        `config.fan_out of ${nodeName(node)} must be a list of the node's input names.`,
        { nodeId: node.id },
      )
      return null
    }
    if (node.type_code !== 'model') {
      report(
        'INVALID_CONFIG',
        path,
        `${nodeName(node)} has config.fan_out, but only model nodes run once per item of a list (one batch); remove it.`,
        { nodeId: node.id },
      )
      return null
    }
    names.forEach((name, k) => {
      if (!node.inputs.some((input) => input.name === name)) {
        report(
          'UNKNOWN_PORT',
          `${path}.${k}`,
          `config.fan_out of ${nodeName(node)} names an input ${JSON.stringify(name)} the node does not have; remove it or add the input.`,
          { nodeId: node.id, inputName: name },
        )
      }
    })
    return new Set(names)
  })
}
