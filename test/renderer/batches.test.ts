// @vitest-environment happy-dom
import { fireEvent, render, screen, waitFor } from '@testing-library/react'
import { createElement } from 'react'
import { afterEach, describe, expect, it } from 'vitest'
import type { BatchDetail, BatchRow } from '../../src-shared/domain/batches'
import type { AtelierApi } from '../../src-shared/ipc/api'
import { BatchesSection } from '../../src-renderer/src/batches/BatchesSection'
import { useAppStore } from '../../src-renderer/src/store'
import { installApi, removeApi } from './harness'

/**
 * The Batches screen over a doubled transport: the list, newest first and paged, then a batch's
 * items, each opening its run's page in Runs.
 */

function row(n: number): BatchRow {
  return {
    id: `batch-${String(n)}`,
    name: `Batch ${String(n)}`,
    modelSlug: 'atelier/flaky',
    status: n === 1 ? 'partial_succeeded' : 'succeeded',
    itemCount: n === 1 ? 1 : 3,
    succeededCount: n === 1 ? 0 : 3,
    failedCount: n === 1 ? 1 : 0,
    canceledCount: 0,
    cost: '0.0300',
    createdAt: new Date(Date.UTC(2026, 0, n)).toISOString(),
    completedAt: null,
  }
}

const ROWS = [row(3), row(2), row(1)]

function api(): AtelierApi {
  const batches: Pick<AtelierApi['batches'], 'list' | 'get'> = {
    list: ({ cursor, limit }) => {
      const start = cursor ? Number(cursor) : 0
      const size = Math.min(limit ?? 50, 2)
      const items = ROWS.slice(start, start + size)
      const next = start + size < ROWS.length ? String(start + size) : null
      return Promise.resolve({ ok: true, value: { items, next } })
    },
    get: ({ id }) => {
      const found = ROWS.find((r) => r.id === id)
      if (!found) {
        return Promise.resolve({
          ok: false,
          error: { code: 'BATCH_NOT_FOUND', message: 'There is no batch.' },
        })
      }
      const detail: BatchDetail = {
        ...found,
        items: [0, 1].map((index) => ({
          index,
          runId: `run-${id}-${String(index)}`,
          status: 'succeeded',
        })),
      }
      return Promise.resolve({ ok: true, value: detail })
    },
  }
  return { batches } as unknown as AtelierApi
}

afterEach(() => {
  removeApi()
})

describe('the Batches screen', () => {
  it('lists batches a page at a time and opens one, whose runs open in Runs', async () => {
    installApi(api())
    render(createElement(BatchesSection))
    await screen.findByText('Batch 3')
    expect(screen.getByText('2 batches so far')).toBeTruthy()
    expect(screen.getAllByText('3 items · 3 succeeded')).toHaveLength(2)
    fireEvent.click(screen.getByRole('button', { name: 'Show more batches' }))
    await screen.findByText('Batch 1')
    expect(screen.getByText('3 batches')).toBeTruthy()
    expect(screen.getByText('1 item · 1 failed')).toBeTruthy()
    expect(screen.getByText('Partly succeeded')).toBeTruthy()
    expect(screen.queryByRole('button', { name: 'Show more batches' })).toBeNull()

    fireEvent.click(screen.getByText('Batch 2'))
    await screen.findByRole('list', { name: 'Runs of the batch' })
    const open = screen.getAllByRole('button', { name: 'Open run' })
    expect(open).toHaveLength(2)
    fireEvent.click(open[1] as HTMLElement)
    await waitFor(() => {
      expect(useAppStore.getState().section).toBe('runs')
    })
    expect(useAppStore.getState().selectedRunId).toBe('run-batch-2-1')
  })
})
