import type { AtelierApi } from '../../src-shared/ipc/api'
import { buildApi } from '../../src-shared/ipc/build-api'

/**
 * A `window.atelier` whose every channel answers UNAVAILABLE and which pushes no event: the base a
 * test double spreads before the domains its tests drive, so a channel added to the contract does
 * not have to be stubbed in every double.
 */
export function unavailableApi(): AtelierApi {
  return buildApi(
    (channel) =>
      Promise.resolve({
        ok: false,
        error: { code: 'UNAVAILABLE', message: `${channel} is not part of these tests.` },
      }),
    () => () => undefined,
  )
}
