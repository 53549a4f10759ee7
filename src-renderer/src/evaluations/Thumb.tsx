import type { Rating } from '../../../src-shared/domain/evaluations'

/** A thumb drawn for Atelier, pointing up or down. */
export function Thumb({ rating, size = 16 }: { rating: Rating; size?: number }) {
  return (
    <svg
      className={`thumb thumb-${rating}`}
      viewBox="0 0 24 24"
      width={size}
      height={size}
      fill="none"
      stroke="currentColor"
      strokeWidth="1.8"
      strokeLinecap="round"
      strokeLinejoin="round"
      aria-hidden="true"
      style={rating === 'down' ? { transform: 'scaleY(-1)' } : undefined}
    >
      <path d="M7 10v11H4a1 1 0 0 1-1-1v-9a1 1 0 0 1 1-1z" />
      <path d="M7 10l4-7a2.5 2.5 0 0 1 3 2.6L13.4 9H19a2 2 0 0 1 2 2.3l-1.3 7.5A2.5 2.5 0 0 1 17.2 21H7" />
    </svg>
  )
}
