/**
 * What the Settings services refuse, with stable codes (the window branches on them) and
 * messages that say what to do. Never a key in any of them.
 */
export type SettingsErrorCode =
  'PROFILE_IN_USE' | 'SANDBOX_IN_USE' | 'OFFLINE' | 'SETTINGS_FILE_DAMAGED' | 'UNAVAILABLE'

export class SettingsError extends Error {
  override readonly name = 'SettingsError'

  constructor(
    readonly code: SettingsErrorCode,
    message: string,
  ) {
    super(message)
  }
}

export function isSettingsError(value: unknown): value is SettingsError {
  return value instanceof SettingsError
}
