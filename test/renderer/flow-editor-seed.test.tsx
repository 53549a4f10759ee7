// @vitest-environment happy-dom
import { act, cleanup, fireEvent, render, screen } from '@testing-library/react'
import { createElement, useState } from 'react'
import { afterEach, describe, expect, it } from 'vitest'
import { RANDOM_SEED_BEHAVIOR, seedModeOf } from '../../src-shared/domain/flow'
import {
  changeSeed,
  SeedField,
  type SeedChange,
} from '../../src-renderer/src/flows/inspector/SeedField'
import { flowFileToDoc, type FileFlow } from '../../src-renderer/src/flows/document'

/**
 * The inspector's seed field (issue 19): the dice/lock toggle, the value a locked seed sends,
 * the last drawn seed shown greyed on the dice, and what the toggle writes into the flow file.
 */

afterEach(cleanup)

/** The field as the inspector holds it: every change is applied and shown again. */
function Harness(props: {
  start: { value: unknown; behavior_code: string | null }
  lastDrawn: number | null
  changes: SeedChange[]
}) {
  const [input, setInput] = useState(props.start)
  return createElement(SeedField, {
    label: 'Seed',
    input,
    lastDrawn: props.lastDrawn,
    disabled: false,
    problem: null,
    onChange: (change: SeedChange) => {
      props.changes.push(change)
      setInput(change)
    },
  })
}

const toggle = () => screen.getByRole('button')

describe('the seed field', () => {
  it('on the dice shows the last drawn seed greyed; locking keeps that seed', () => {
    const changes: SeedChange[] = []
    render(
      createElement(Harness, {
        start: { value: null, behavior_code: null },
        lastDrawn: 90210,
        changes,
      }),
    )
    expect(screen.getByTestId('seed-field').dataset.mode).toBe('random')
    expect(toggle().textContent).toContain('New each run')
    expect(toggle().getAttribute('aria-pressed')).toBe('false')
    expect(screen.getByTestId('seed-drawn').textContent).toBe('Last drawn: 90210')
    expect(screen.getByTestId('seed-drawn').className).toContain('muted')
    expect(screen.queryByRole('spinbutton')).toBeNull()

    act(() => {
      fireEvent.click(toggle())
    })
    expect(changes.at(-1)).toEqual({ value: 90210, behavior_code: null })
    expect(screen.getByTestId('seed-field').dataset.mode).toBe('locked')
    expect(toggle().getAttribute('aria-pressed')).toBe('true')
    const field = screen.getByRole<HTMLInputElement>('spinbutton', { name: 'Seed' })
    expect(field.value).toBe('90210')

    act(() => {
      fireEvent.change(field, { target: { value: '7' } })
    })
    expect(changes.at(-1)).toEqual({ value: 7, behavior_code: null })
    expect(screen.getByRole<HTMLInputElement>('spinbutton', { name: 'Seed' }).value).toBe('7')
  })

  it('back on the dice keeps the locked value in the file but draws a new seed each run', () => {
    const changes: SeedChange[] = []
    render(
      createElement(Harness, {
        start: { value: 7, behavior_code: null },
        lastDrawn: null,
        changes,
      }),
    )
    expect(screen.getByTestId('seed-field').dataset.mode).toBe('locked')
    act(() => {
      fireEvent.click(toggle())
    })
    expect(changes.at(-1)).toEqual({ value: 7, behavior_code: RANDOM_SEED_BEHAVIOR })
    expect(seedModeOf(changes.at(-1))).toBe('random')
    expect(screen.getByTestId('seed-drawn').textContent).toBe('Drawn when the node runs')
  })

  it('writes the mode into the node input, so it is saved and exported with the flow', () => {
    const file: FileFlow = {
      id: '00000000-0000-4000-8000-000000000001',
      name: 'Seeded',
      nodes: [
        {
          id: '00000000-0000-4000-8000-000000000002',
          label: 'Picture',
          type_code: 'model',
          config: {},
          inputs: [
            {
              id: '00000000-0000-4000-8000-000000000003',
              name: 'seed',
              variable_type_code: 'seed',
              value: null,
            },
          ],
          outputs: [],
        },
      ],
    }
    const doc = flowFileToDoc(file)
    const locked = changeSeed(
      doc,
      '00000000-0000-4000-8000-000000000002',
      '00000000-0000-4000-8000-000000000003',
      { value: 42, behavior_code: null },
    )
    const input = locked.nodes[0]?.data.record.inputs?.[0]
    expect(input).toMatchObject({ value: 42, behavior_code: null })
    expect(seedModeOf(input)).toBe('locked')
    const dice = changeSeed(
      locked,
      '00000000-0000-4000-8000-000000000002',
      '00000000-0000-4000-8000-000000000003',
      { value: 42, behavior_code: RANDOM_SEED_BEHAVIOR },
    )
    expect(seedModeOf(dice.nodes[0]?.data.record.inputs?.[0])).toBe('random')
    // The document it came from is left as it was (undo keeps it).
    expect(seedModeOf(doc.nodes[0]?.data.record.inputs?.[0])).toBe('random')
  })
})
