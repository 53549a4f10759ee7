import { CodedError } from '../errors/coded'
import { isServiceError } from '../service'

/**
 * What the Settings services refuse, with stable codes (the window branches on them) and
 * messages that say what to do. Never a key in any of them.
 */
export type SettingsErrorCode =
  'PROFILE_IN_USE' | 'SANDBOX_IN_USE' | 'OFFLINE' | 'SETTINGS_FILE_DAMAGED' | 'UNAVAILABLE'

export class SettingsError extends CodedError<SettingsErrorCode> {
  override readonly name = 'SettingsError'
}

export function isSettingsError(value: unknown): value is SettingsError {
  return value instanceof SettingsError
}

/**
 * Runs a call that needs the service. Unreachable is said once, in the words of what to do
 * (`what` did not happen; `kept` says where the thing lives, e.g. "Webhooks live on the
 * service"); the service's other refusals pass as they are.
 */
export async function online<T>(what: string, kept: string, call: () => Promise<T>): Promise<T> {
  try {
    return await call()
  } catch (error) {
    if (isServiceError(error) && error.status === 0 && !error.outcomeUnknown) {
      throw new SettingsError(
        'OFFLINE',
        `The service cannot be reached, so ${what}. ${kept}, not on this computer: check the connection and try again once Atelier is back online.`,
      )
    }
    throw error
  }
}
