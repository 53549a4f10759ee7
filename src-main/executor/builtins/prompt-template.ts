import type { PortValue } from '../types'
import { local, type BuiltinStep } from './context'
import { BuiltinError } from './errors'
import { describeNode, show } from './ports'

/**
 * `prompt_template`: fills each `{name}` of `template` with the node's input of that name, as the
 * service's own built-in does, so a flow gives the same prompt here and there:
 * - a placeholder is `{` + letters, digits or `_` + `}`; anything else in braces (`{ x }`, `{}`,
 *   `{a-b}`) is plain text, and `{{x}}` is `{` + the value of x + `}`;
 * - the text is filled in one pass: a value that itself holds `{other}` is not filled again;
 * - text goes in as it is, a number or true/false as written (`3`, `0.5`, `true`);
 * - `{template}` names the template itself, which is no placeholder value: it counts as missing.
 * A placeholder with no value fails with TEMPLATE_PLACEHOLDER_MISSING naming every one missing,
 * and a value that is no text, number or boolean (an image, a list) with INPUT_INVALID.
 */

const PLACEHOLDER = /\{([A-Za-z0-9_]+)\}/g
const TEMPLATE_LENGTH = { min: 1, max: 4000 }

export function placeholdersOf(template: string): string[] {
  return [...new Set(Array.from(template.matchAll(PLACEHOLDER), (match) => match[1] ?? ''))]
}

/** The filled template, or the names of the placeholders that have no value. */
export function fillTemplate(
  template: string,
  values: Readonly<Record<string, PortValue>>,
): { prompt: string; missing: [] } | { prompt: null; missing: string[] } {
  const valueOf = (name: string): PortValue =>
    name === 'template' || !Object.hasOwn(values, name) ? undefined : values[name]
  const missing = placeholdersOf(template).filter((name) => {
    const value = valueOf(name)
    return value === undefined || value === null
  })
  if (missing.length > 0) return { prompt: null, missing }
  const prompt = template.replace(PLACEHOLDER, (_match, name: string) => {
    const value = valueOf(name)
    return typeof value === 'string' ? value : String(value)
  })
  return { prompt, missing: [] }
}

export const runPromptTemplate: BuiltinStep = (run) => {
  const template = run.ports.text('template', { required: true, length: TEMPLATE_LENGTH })
  for (const name of placeholdersOf(template)) {
    const value = run.inputs[name]
    if (value === undefined || value === null || name === 'template') continue
    if (typeof value !== 'string' && typeof value !== 'number' && typeof value !== 'boolean') {
      throw run.ports.invalid(name, `text, a number or true/false to fill {${name}}`, value)
    }
  }
  const filled = fillTemplate(template, run.inputs)
  if (filled.prompt === null) {
    const names = filled.missing.map((name) => `{${name}}`).join(', ')
    throw new BuiltinError(
      'TEMPLATE_PLACEHOLDER_MISSING',
      `The template of node ${describeNode(run.node)} uses ${names}, but the node has no input of ${filled.missing.length === 1 ? 'that name' : 'those names'} with a value; add ${filled.missing.length === 1 ? 'a text input' : 'text inputs'} named ${filled.missing.map((name) => show(name)).join(', ')} and feed ${filled.missing.length === 1 ? 'it' : 'them'} (an edge, a flow input or a value).`,
    )
  }
  return Promise.resolve(local({ prompt: filled.prompt }))
}
