import { local, type BuiltinStep } from './context'

/**
 * `branch`: passes `image` on through `if_true` when `condition` is true, through `if_false`
 * otherwise. The output not taken is left out of the outcome (not set to null): a node it feeds
 * has no value to run on, and the scheduler skips it and what depends on it, as the service
 * does. The image goes on untouched; this node neither reads nor copies it.
 */
export const runBranch: BuiltinStep = (run) => {
  const condition = run.ports.boolean('condition', { required: true })
  if (!run.ports.has('image')) throw run.ports.missing('image', 'connect the image to pass on')
  const taken = condition ? 'if_true' : 'if_false'
  const other = condition ? 'if_false' : 'if_true'
  run.emit({
    type: 'log',
    level: 'info',
    message: `The condition is ${condition}: the image goes on through ${taken}; the nodes fed by ${other} are skipped.`,
  })
  return Promise.resolve(local({ [taken]: run.ports.raw('image') }))
}
