import type { z } from 'zod'
import {
  ipcContract,
  ipcFail,
  ipcOk,
  type IpcChannel,
  type IpcError,
  type IpcParsedArgs,
  type IpcResult,
  type IpcValue,
} from '../../src-shared/ipc'
import { isCodedError, CodedError } from '../errors/coded'
import { isOutboxError } from '../outbox'
import { isSecretsError } from '../secrets'

/** Who is calling: the Electron transport and the browser bridge each fill this in. */
export interface IpcCallContext {
  shell: 'electron' | 'web'
}

export type IpcHandler<C extends IpcChannel> = (
  args: IpcParsedArgs<C>,
  context: IpcCallContext,
) => IpcValue<C> | Promise<IpcValue<C>>

/** A handler for every channel, and nothing else: the compiler holds the two lists together. */
export type IpcHandlers = { [C in IpcChannel]: IpcHandler<C> }

/**
 * An error a handler throws on purpose (UNAVAILABLE, …): like every `CodedError`, its code and
 * message reach the renderer as they are.
 */
export class IpcHandlerError extends CodedError {
  override readonly name = 'IpcHandlerError'
}

function isChannel(channel: string): channel is IpcChannel {
  return Object.hasOwn(ipcContract, channel)
}

function describeIssues(issues: z.core.$ZodIssue[]): NonNullable<IpcError['issues']> {
  return issues.map((issue) => ({
    path: issue.path.map(String).join('.') || '(arguments)',
    message: issue.message,
  }))
}

/**
 * The one mapping of errors to the window's: a feature's `CodedError`, the outbox's and the
 * keychain's refusals, and a service error (its own code and plain message). Anything else is
 * reported as INTERNAL with a generic message, so that internal details (paths, stack traces,
 * keys) never cross the boundary.
 */
function codedError(error: unknown): IpcError | undefined {
  if (isCodedError(error)) {
    return {
      code: error.code,
      message: error.message,
      ...(error.issues ? { issues: error.issues } : {}),
    }
  }
  // Coded too, from folders whose errors do not extend `CodedError` yet.
  if (isOutboxError(error) || isSecretsError(error)) {
    return { code: error.code, message: error.message }
  }
  if (
    error instanceof Error &&
    'code' in error &&
    typeof error.code === 'string' &&
    'status' in error &&
    typeof error.status === 'number'
  ) {
    return { code: error.code, message: error.message }
  }
  return undefined
}

/**
 * Validates and runs one call. Transport-independent: the Electron transport and the browser
 * bridge both end here, so both give the same answers to the same input.
 */
export async function dispatchIpc(
  handlers: IpcHandlers,
  channel: string,
  rawArgs: unknown,
  context: IpcCallContext,
  onInternalError: (channel: string, error: unknown) => void = () => undefined,
): Promise<IpcResult<unknown>> {
  if (!isChannel(channel)) {
    return ipcFail({ code: 'UNKNOWN_CHANNEL', message: `There is no IPC channel "${channel}".` })
  }
  const parsed = ipcContract[channel].args.safeParse(rawArgs)
  if (!parsed.success) {
    return ipcFail({
      code: 'INVALID_ARGUMENT',
      message: `The arguments of ${channel} are not valid: ${parsed.error.issues
        .map((issue) => issue.message)
        .join('; ')}`,
      issues: describeIssues(parsed.error.issues),
    })
  }
  try {
    // The cast is safe: `parsed.data` was produced by this very channel's schema.
    const handler = handlers[channel] as IpcHandler<IpcChannel>
    return ipcOk(await handler(parsed.data as never, context))
  } catch (error) {
    const coded = codedError(error)
    if (coded) return ipcFail(coded)
    onInternalError(channel, error)
    return ipcFail({
      code: 'INTERNAL',
      message: `Atelier hit an unexpected problem while running ${channel}. Try again; if it keeps happening, restart Atelier.`,
    })
  }
}
