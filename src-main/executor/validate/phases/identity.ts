import { nodeName, type AnalysisContext, type Place } from './context'

/**
 * Ids share one space across the flow's inputs, outputs, nodes and the nodes' ports, and names
 * are unique among siblings. Nothing later relies on this having passed: the phases after look
 * things up by index, or take the first of a repeated id, so every problem is still reported.
 */
export function checkIdentity(context: AnalysisContext): void {
  const { flow, nodes, report } = context
  const ids = new Map<string, string>()
  const claim = (id: string, path: string, place: Place) => {
    const earlier = ids.get(id)
    if (earlier === undefined) ids.set(id, path)
    else {
      report(
        'DUPLICATE_ID',
        `${path}.id`,
        `${path} has the id of ${earlier}; every node, input and output of a flow needs its own id (give this one a new uuid).`,
        place,
      )
    }
  }
  flow.inputs.forEach((input, k) => {
    claim(input.id, `inputs.${k}`, {})
  })
  flow.outputs.forEach((output, k) => {
    claim(output.id, `outputs.${k}`, {})
  })
  const slugs = new Map<string, number>()
  nodes.forEach((node, i) => {
    claim(node.id, `nodes.${i}`, { nodeId: node.id })
    node.inputs.forEach((input, j) => {
      claim(input.id, `nodes.${i}.inputs.${j}`, { nodeId: node.id, inputName: input.name })
    })
    node.outputs.forEach((output, j) => {
      claim(output.id, `nodes.${i}.outputs.${j}`, { nodeId: node.id, outputId: output.id })
    })
    uniqueNames(context, node.inputs, `nodes.${i}.inputs`, 'node input', (j) => ({
      nodeId: node.id,
      inputName: node.inputs[j]?.name ?? '',
    }))
    uniqueNames(context, node.outputs, `nodes.${i}.outputs`, 'node output', (j) => ({
      nodeId: node.id,
      outputId: node.outputs[j]?.id ?? '',
    }))
    if (node.slug !== null) {
      const first = slugs.get(node.slug)
      if (first === undefined) slugs.set(node.slug, i)
      else {
        report(
          'DUPLICATE_SLUG',
          `nodes.${i}.slug`,
          `${nodeName(node)} has the slug ${JSON.stringify(node.slug)} of nodes.${first}; node slugs must be unique within a flow.`,
          { nodeId: node.id },
        )
      }
    }
  })
  uniqueNames(context, flow.inputs, 'inputs', 'flow input', () => ({}))
  uniqueNames(context, flow.outputs, 'outputs', 'flow output', () => ({}))
}

function uniqueNames(
  context: AnalysisContext,
  items: readonly { name: string }[],
  path: string,
  what: string,
  place: (index: number) => Place,
) {
  const seen = new Map<string, number>()
  items.forEach((item, index) => {
    const first = seen.get(item.name)
    if (first === undefined) seen.set(item.name, index)
    else {
      context.report(
        'DUPLICATE_NAME',
        `${path}.${index}.name`,
        `${path}.${index} is named ${JSON.stringify(item.name)} like ${path}.${first}; ${what} names must be unique, rename one.`,
        place(index),
      )
    }
  })
}
