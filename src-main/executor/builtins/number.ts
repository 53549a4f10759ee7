import { local, type BuiltinStep } from './context'

/** `number`: the number in `value` (or mapped from a flow input), on `number`; 0 by default. */
export const runNumber: BuiltinStep = (run) =>
  Promise.resolve(local({ number: run.ports.number('value', { default: 0 }) }))
