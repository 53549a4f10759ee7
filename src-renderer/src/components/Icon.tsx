import type { Section } from '../store'

// Simple stroke icons drawn for Atelier; one path set per section.
const PATHS: Record<Section, string[]> = {
  flows: ['M5 6h4v4H5z', 'M15 14h4v4h-4z', 'M9 8h3a2 2 0 0 1 2 2v4a2 2 0 0 0 2 2'],
  assets: ['M4 5h16v14H4z', 'M4 15l4-4 4 4 3-3 5 5', 'M15 9.5a1.5 1.5 0 1 0 0-.01'],
  runs: ['M6 4l13 8-13 8z'],
  evaluations: ['M5 12l4 4 10-10', 'M4 20h16'],
  batches: ['M4 6h16', 'M4 12h16', 'M4 18h10', 'M17 16l3 2-3 2z'],
  settings: [
    'M12 15a3 3 0 1 0 0-6 3 3 0 0 0 0 6z',
    'M12 2v3M12 19v3M2 12h3M19 12h3M4.9 4.9l2.1 2.1M17 17l2.1 2.1M4.9 19.1L7 17M17 7l2.1-2.1',
  ],
}

export function SectionIcon({ section }: { section: Section }) {
  return (
    <svg
      className="icon"
      viewBox="0 0 24 24"
      width="18"
      height="18"
      fill="none"
      stroke="currentColor"
      strokeWidth="1.8"
      strokeLinecap="round"
      strokeLinejoin="round"
      aria-hidden="true"
    >
      {PATHS[section].map((d) => (
        <path key={d} d={d} />
      ))}
    </svg>
  )
}
