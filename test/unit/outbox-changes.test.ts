import { describe, expect, it } from 'vitest'
import { changedByReplay, type ReplayedEntry } from '../../src-main/outbox'

const entry = (kind: string, outcome: ReplayedEntry['outcome']): ReplayedEntry => ({
  seq: 1,
  kind,
  subjectId: null,
  outcome,
})

describe('what a replay changed for the window', () => {
  it('names the evaluations for a rating sent or refused, the assets for folder and asset writes', () => {
    expect(changedByReplay({ entries: [entry('evaluation.feedback', 'sent')] })).toEqual([
      'evaluations',
    ])
    expect(
      changedByReplay({
        entries: [
          entry('folder.create', 'sent'),
          entry('asset.move', 'rejected'),
          entry('evaluation.feedback', 'rejected'),
        ],
      }),
    ).toEqual(['assets', 'evaluations'])
  })

  it('names nothing for writes still waiting, or for flows (no list of the window shows them)', () => {
    expect(
      changedByReplay({
        entries: [entry('evaluation.feedback', 'pending'), entry('flow.update', 'sent')],
      }),
    ).toEqual([])
  })
})
