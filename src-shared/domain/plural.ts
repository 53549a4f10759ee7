/**
 * "1 node", "3 nodes", "1 match", "2 matches": a count with its noun, singular for exactly one.
 * Every count the person reads goes through here, so that none says "1 parameters". The many
 * form is the noun with an "s" unless given (match → matches, entry → entries). Counts use
 * English digit grouping: the words around them are English too.
 */
export function plural(count: number, one: string, many = `${one}s`): string {
  return `${count.toLocaleString('en-US')} ${count === 1 ? one : many}`
}
