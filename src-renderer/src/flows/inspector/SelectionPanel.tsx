import { plural } from '../../../../src-shared/domain/plural'
import { useAppStore } from '../../store'
import { GroupDeleteButtons } from './GroupDeleteButtons'

/** Several nodes selected: what can be done to them together. */
export function SelectionPanel({ count }: { count: number }) {
  const copySelection = useAppStore((s) => s.copySelection)
  return (
    <section className="inspector" aria-label="Selected nodes">
      <p>{plural(count, 'node')} selected.</p>
      <div className="inspector-actions">
        <button type="button" className="small-button" onClick={copySelection}>
          Copy
        </button>
        <GroupDeleteButtons groupTitle="Group them in a labelled frame" />
      </div>
    </section>
  )
}
