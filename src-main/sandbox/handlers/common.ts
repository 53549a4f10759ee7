import type { BaseRecord } from '../store'
import type { HandlerContext, OperationId, SuccessBody } from './types'

/** A handler that fits any operation; the factories below make these for whole families. */
export type GenericHandler = <O extends OperationId>(context: HandlerContext<O>) => SuccessBody<O>

export interface ListSpec {
  collection: string
  /** The contract schema of one item: its scalar fields are what q, sort_by and fields may name. */
  schema: string
  includeGlobal?: boolean
  /** The path parameter that names the parent, where `any` means every parent. */
  parentParam?: string
  defaultSort?: string
}

/**
 * A list operation over one collection. The cast is where the generic engine meets the typed
 * contract: the records were written from the same schemas, and the contract tests check them.
 */
export function listOf(spec: ListSpec): GenericHandler {
  return <O extends OperationId>(context: HandlerContext<O>) => {
    const params = context.params as Record<string, string>
    const parentId = spec.parentParam ? params[spec.parentParam] : undefined
    return context.sandbox.store.list(
      {
        collection: spec.collection,
        orgId: context.auth.orgId,
        includeGlobal: spec.includeGlobal ?? false,
        ...(parentId !== undefined ? { parentId } : {}),
      },
      context.query,
      {
        fields: context.sandbox.contract.scalarFields(spec.schema),
        ...(spec.defaultSort ? { defaultSort: spec.defaultSort } : {}),
      },
    ) as never
  }
}

export interface GetSpec {
  collection: string
  idParam: string
  what: string
  includeGlobal?: boolean
  notFoundCode?: string
}

export function getOne(spec: GetSpec): GenericHandler {
  return <O extends OperationId>(context: HandlerContext<O>) => {
    const id = (context.params as Record<string, string>)[spec.idParam] ?? ''
    return context.sandbox.store.require<BaseRecord>(
      spec.collection,
      id,
      context.auth.orgId,
      spec.what,
      {
        includeGlobal: spec.includeGlobal ?? false,
        ...(spec.notFoundCode ? { notFoundCode: spec.notFoundCode } : {}),
      },
    ) as never
  }
}
