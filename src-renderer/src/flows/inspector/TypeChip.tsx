import { typeFamily } from '../words'

export function TypeChip({ type }: { type: string }) {
  return <span className={`type-chip type-${typeFamily(type)}`}>{type}</span>
}
