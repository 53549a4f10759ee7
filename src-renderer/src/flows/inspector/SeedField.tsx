import { RANDOM_SEED_BEHAVIOR, seedModeOf } from '../../../../src-shared/domain/flow'
import { setInputValue, type EditorDoc, type FileNodeInput } from '../document'

/** The largest seed the service takes (seeds are 32-bit). */
const MAX_SEED = 4_294_967_295

/** What the seed field asks the editor to change on the node input. */
export interface SeedChange {
  value: number | null
  behavior_code: string | null
}

/** The document with a seed input's value and mode changed as the seed field asked. */
export function changeSeed(
  doc: EditorDoc,
  nodeId: string,
  inputId: string,
  change: SeedChange,
): EditorDoc {
  const valued = setInputValue(doc, nodeId, inputId, change.value)
  return {
    ...valued,
    nodes: valued.nodes.map((node) =>
      node.id !== nodeId
        ? node
        : {
            ...node,
            data: {
              record: {
                ...node.data.record,
                inputs: (node.data.record.inputs ?? []).map((input) =>
                  input.id === inputId ? { ...input, behavior_code: change.behavior_code } : input,
                ),
              },
            },
          },
    ),
  }
}

/**
 * A seed input with its dice/lock toggle (issue 19, "seeds are inputs"). Locked: the value typed
 * here is sent every run. Dice: a new seed is drawn each time the node runs, and the last one
 * drawn is shown greyed so it can be locked to make that picture again. The value a locked seed
 * had is kept while on the dice (the flow file keeps it with `behavior_code: randomize`), so
 * locking again without a newer draw gives it back.
 */
export function SeedField({
  label,
  input,
  lastDrawn,
  disabled,
  problem,
  onChange,
}: {
  label: string
  input: Pick<FileNodeInput, 'value' | 'behavior_code'>
  /** The seed drawn for the node's latest run, when it was on the dice. */
  lastDrawn: number | null
  disabled: boolean
  problem: string | null
  onChange: (change: SeedChange) => void
}) {
  const mode = seedModeOf(input)
  const kept = typeof input.value === 'number' ? input.value : null
  const locked = mode === 'locked'
  return (
    <div className="seed-field" data-testid="seed-field" data-mode={mode}>
      <button
        type="button"
        className="small-button seed-toggle"
        aria-pressed={locked}
        disabled={disabled}
        title={
          locked
            ? 'Locked: every run uses this seed. Press to draw a new seed each run.'
            : 'Dice: a new seed each run. Press to lock the seed shown.'
        }
        onClick={() => {
          if (locked) {
            onChange({ value: kept, behavior_code: RANDOM_SEED_BEHAVIOR })
          } else {
            onChange({ value: lastDrawn ?? kept ?? 0, behavior_code: null })
          }
        }}
      >
        {locked ? '🔒 Locked' : '🎲 New each run'}
      </button>
      {locked ? (
        <input
          type="number"
          aria-label={label}
          min={0}
          max={MAX_SEED}
          step={1}
          value={kept ?? ''}
          disabled={disabled}
          aria-invalid={problem !== null}
          onChange={(event) => {
            // Emptying a locked seed would put it on the dice mid-typing: the toggle does that.
            const text = event.target.value.trim()
            if (text !== '') onChange({ value: Number(text), behavior_code: null })
          }}
        />
      ) : (
        <span className="muted seed-drawn" data-testid="seed-drawn">
          {lastDrawn !== null ? `Last drawn: ${lastDrawn}` : 'Drawn when the node runs'}
        </span>
      )}
      {problem !== null ? <p className="field-problem">{problem}</p> : null}
    </div>
  )
}
