import { local, type BuiltinStep } from './context'

/** `text`: the text typed into `value` (or mapped from a flow input), on `text`; '' by default. */
export const runText: BuiltinStep = (run) =>
  Promise.resolve(local({ text: run.ports.text('value', { default: '' }) }))
