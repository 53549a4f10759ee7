/** The error of the given class a call was refused with; fails the test when it was not refused. */
export function refusalOf<E extends Error>(
  kind: abstract new (...args: never[]) => E,
  run: () => unknown,
): E {
  try {
    run()
  } catch (error) {
    if (error instanceof kind) return error
    throw error
  }
  throw new Error(`It was not refused: a ${kind.name} was expected.`)
}
