import { describe, expect, it } from 'vitest'
import {
  describeWrite,
  isPlaceholder,
  WRITE_KINDS,
  writeSchema,
  type OfflineWrite,
} from '../../src-main/outbox'

const FOLDER = '01a03359-f9e4-7e38-9283-26d2cef6e6c0'
const LOCAL = 'local:3b241101-e2bb-4255-8caf-4136c566a962'

const valid: OfflineWrite[] = [
  { kind: 'evaluation.feedback', evaluationId: FOLDER, isPositive: true, reason: 'Crisp' },
  { kind: 'evaluation.feedback', evaluationId: FOLDER, isPositive: null, reason: null },
  { kind: 'flow.update', flowId: FOLDER, basedOn: null, after: null, changes: { name: 'A' } },
  {
    kind: 'flow.graph',
    flowId: FOLDER,
    basedOn: '2026-01-01T00:00:00+00:00',
    after: 3,
    graph: { nodes: [{ name: 'n' }], inputs: [], outputs: [] },
  },
  { kind: 'folder.create', folderId: LOCAL, name: 'Picks', parentId: FOLDER },
  { kind: 'folder.rename', folderId: LOCAL, name: 'Picks, sorted' },
  { kind: 'folder.move', folderId: FOLDER, parentId: null },
  { kind: 'folder.delete', folderId: FOLDER },
  { kind: 'asset.move', assetId: FOLDER, folderId: LOCAL },
  { kind: 'asset.rename', assetId: FOLDER, name: 'harbour at dusk.png' },
]

function problems(write: unknown): string {
  const parsed = writeSchema.safeParse(write)
  return parsed.success ? '' : parsed.error.issues.map((i) => i.message).join('; ')
}

describe('offline writes', () => {
  it('accepts one write of every kind and describes each in plain words', () => {
    expect(new Set(valid.map((w) => w.kind))).toEqual(new Set(WRITE_KINDS))
    for (const write of valid) {
      expect(problems(write), write.kind).toBe('')
      expect(describeWrite(write)).not.toBe('')
    }
    expect(describeWrite(valid[0] as OfflineWrite)).toBe(
      `thumbs-up on evaluation ${FOLDER}: "Crisp"`,
    )
    expect(describeWrite(valid[5] as OfflineWrite)).toBe(
      `rename folder ${LOCAL} to "Picks, sorted"`,
    )
  })

  it('refuses what the service would refuse, or what cannot be sent at all', () => {
    const feedback = valid[0] as OfflineWrite
    expect(problems({ ...feedback, reason: 'x'.repeat(2001) })).toContain('2000')
    expect(problems({ ...feedback, reason: '' })).not.toBe('')
    expect(problems({ ...feedback, isPositive: null })).toContain('a comment needs a rating')
    expect(problems({ ...feedback, evaluationId: 'a/b' })).toContain('not an id of the service')
    // A placeholder stands for a folder only: an evaluation is never created offline.
    expect(problems({ ...feedback, evaluationId: LOCAL })).toContain('not an id of the service')
    expect(problems({ ...valid[4], name: 'a/b' })).toContain('must not contain "/"')
    expect(problems({ ...valid[4], folderId: FOLDER })).toContain('local folder id')
    expect(problems({ ...valid[2], changes: {} })).toContain('at least one field')
    expect(problems({ ...valid[2], changes: { owner: 'x' } })).not.toBe('')
    expect(problems({ ...valid[7], extra: true })).not.toBe('')
    expect(problems({ kind: 'run.start' })).not.toBe('')
  })

  it('tells placeholders from service ids', () => {
    expect(isPlaceholder(LOCAL)).toBe(true)
    expect(isPlaceholder(FOLDER)).toBe(false)
    expect(isPlaceholder('local:not-a-uuid')).toBe(false)
  })
})
