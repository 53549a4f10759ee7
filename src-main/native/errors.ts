/**
 * Stable codes for a native module that cannot load. Callers switch on the code, never on the
 * message; the message is written for the person who can fix it (it names the module, the ABIs
 * and the one command to run) and carries no stack trace.
 */
export type NativeModuleErrorCode =
  /** The binary was built for another NODE_MODULE_VERSION than this runtime's. */
  | 'NATIVE_MODULE_ABI_MISMATCH'
  /** No binary where the module looks for it. */
  | 'NATIVE_MODULE_MISSING'
  /** A file is there but the runtime cannot load it (damaged, another platform, not a library). */
  | 'NATIVE_MODULE_UNUSABLE'

export interface NativeModuleFacts {
  /** The npm package: `better-sqlite3`. */
  module: string
  /** The NODE_MODULE_VERSION the binary was built for, when the loader said it. */
  builtFor: number | undefined
  /** The NODE_MODULE_VERSION this runtime loads. */
  needs: number
  /** This runtime, as a person reads it: `Electron 45.4.1`, `Node.js 20.19.6`. */
  runtime: string
  /** The one command that fixes it, run in the checkout. */
  command: string
  /** The binary that failed, when known. */
  binary: string | undefined
}

export class NativeModuleError extends Error {
  override readonly name = 'NativeModuleError'

  constructor(
    readonly code: NativeModuleErrorCode,
    message: string,
    readonly facts: NativeModuleFacts,
    options?: ErrorOptions,
  ) {
    super(message, options)
  }

  /** What a log line or the IPC boundary may carry: no cause, no stack. */
  toJSON(): { name: string; code: NativeModuleErrorCode; message: string } & NativeModuleFacts {
    return { name: this.name, code: this.code, message: this.message, ...this.facts }
  }
}

export function isNativeModuleError(value: unknown): value is NativeModuleError {
  return value instanceof NativeModuleError
}
