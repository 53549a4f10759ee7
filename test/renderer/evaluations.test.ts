// @vitest-environment happy-dom
import { act, fireEvent, render, screen, waitFor, within } from '@testing-library/react'
import { createElement } from 'react'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import type {
  EvaluationDetail,
  EvaluationListInput,
  EvaluationRow,
  PendingFeedback,
} from '../../src-shared/domain/evaluations'
import type { AtelierApi } from '../../src-shared/ipc/api'
import type { IpcError, IpcResult } from '../../src-shared/ipc/result'
import { App } from '../../src-renderer/src/shell/App'
import { useAppStore } from '../../src-renderer/src/store'
import { settled, ShellMain, u } from './shell-transport'
import { installApi, removeApi, sizeScrollAreas, unsizeScrollAreas } from './harness'

const ok = <T>(value: T): Promise<IpcResult<T>> => Promise.resolve({ ok: true, value })
const failed = (error: IpcError): Promise<IpcResult<never>> => Promise.resolve({ ok: false, error })

function row(n: number, over: Partial<EvaluationRow> = {}): EvaluationRow {
  return {
    id: u(n),
    createdAt: `2026-03-${String(10 + (n % 10)).padStart(2, '0')}T09:30:00Z`,
    title: `a lighthouse on a cliff, take ${n}`,
    status: 'completed',
    verdict: n % 2 === 0 ? 'passed' : 'failed',
    score: n % 2 === 0 ? 0.82 : 0.31,
    rating: null,
    pending: null,
    attempt: 1,
    superseded: false,
    runId: null,
    jobClass: 'standard',
    ...over,
  }
}

function detail(r: EvaluationRow, pending: PendingFeedback | null = null): EvaluationDetail {
  return {
    id: r.id,
    row: { ...r, pending },
    completedAt: '2026-03-10T09:31:00Z',
    failureCode: null,
    prompt: r.title,
    taskType: 'illustration',
    taskDescription: null,
    instructions: null,
    cost: '0.010000',
    durationMs: 4200,
    modelId: null,
    image: {
      from: 'url',
      sha256: null,
      url: 'https://x.invalid/a.png',
      assetId: null,
      label: 'a.png',
    },
    judges: [
      {
        id: u(900),
        name: 'Composition',
        description: null,
        category: 'aesthetics',
        passed: true,
        confidence: 0.91,
        weight: 2,
        reasoning: 'The horizon sits on the lower third.',
        evidence: ['horizon at 66%'],
        issues: [],
      },
      {
        id: u(901),
        name: 'Anatomy',
        description: null,
        category: 'correctness',
        passed: false,
        confidence: 0.7,
        weight: 1,
        reasoning: 'The keeper has six fingers.',
        evidence: [],
        issues: [
          { code: 'extra_fingers', severity: 'high', description: 'Six fingers', region: null },
        ],
      },
    ],
    topIssues: ['Six fingers'],
    topStrengths: ['Strong composition'],
    gateFailures: [],
    action: null,
    attempts: [
      {
        id: u(7),
        attempt: 1,
        createdAt: r.createdAt,
        status: 'completed',
        verdict: 'failed',
        score: 0.3,
        superseded: true,
        current: false,
        known: true,
      },
      {
        id: r.id,
        attempt: 2,
        createdAt: r.createdAt,
        status: 'completed',
        verdict: r.verdict,
        score: r.score,
        superseded: false,
        current: true,
        known: true,
      },
    ],
    feedback: { rating: r.rating, reason: null },
    pending,
    canReevaluate: true,
  }
}

/** What the main process would answer for the evaluations, kept in memory. */
class EvaluationsMain extends ShellMain {
  rows = Array.from({ length: 120 }, (_, i) => row(i + 1))
  listed: EvaluationListInput[] = []
  asked: string[] = []
  rated: unknown[] = []
  submitted: unknown[] = []
  /** What `feedback` answers: sent (null) or left waiting in the outbox. */
  outbox: 'sent' | 'pending' = 'sent'
  submitAnswer: IpcError | null = null
  pending = new Map<string, PendingFeedback>()

  detailOf(id: string): EvaluationDetail | null {
    const found = this.rows.find((r) => r.id === id)
    return found ? detail(found, this.pending.get(id) ?? null) : null
  }

  readonly evaluationsApi: AtelierApi['evaluations'] = {
    list: (args) => {
      this.listed.push(args)
      const words = (args.text ?? '').toLowerCase()
      const kept = this.rows.filter(
        (r) =>
          r.title.toLowerCase().includes(words) &&
          (args.verdict === undefined || r.verdict === args.verdict),
      )
      const start = args.cursor ? Number(args.cursor) : 0
      const limit = args.limit ?? 60
      const items = kept.slice(start, start + limit)
      const next = start + limit < kept.length ? String(start + limit) : null
      return ok({ mode: words ? ('ranked' as const) : ('list' as const), items, next })
    },
    get: ({ id }) => {
      this.asked.push(`get ${id}`)
      const found = this.detailOf(id)
      return found ? ok(found) : failed({ code: 'EVALUATION_NOT_FOUND', message: 'gone' })
    },
    refresh: ({ id }) => {
      this.asked.push(`refresh ${id}`)
      const found = this.detailOf(id)
      return found ? ok(found) : failed({ code: 'EVALUATION_NOT_FOUND', message: 'gone' })
    },
    feedback: (args) => {
      this.rated.push(args)
      const index = this.rows.findIndex((r) => r.id === args.id)
      const current = this.rows[index] as EvaluationRow
      if (this.outbox === 'pending') {
        this.pending.set(args.id, {
          seq: this.rated.length,
          rating: args.rating,
          reason: args.reason ?? null,
          state: 'pending',
          error: null,
        })
      } else {
        this.rows[index] = { ...current, rating: args.rating }
      }
      return ok(this.detailOf(args.id) as EvaluationDetail)
    },
    submit: (args) => {
      this.submitted.push(args)
      if (this.submitAnswer) return failed(this.submitAnswer)
      const fresh = row(500, { status: 'pending', verdict: null, score: null, title: 'submitted' })
      this.rows.unshift(fresh)
      return ok({ evaluation: detail(fresh), upload: null })
    },
  }
}

let main: EvaluationsMain

beforeEach(async () => {
  sizeScrollAreas(['evaluation-rows'])
  localStorage.clear()
  main = new EvaluationsMain()
  installApi({ ...main.api, evaluations: main.evaluationsApi })
  render(createElement(App))
  await act(async () => {})
  await settled(() => {
    useAppStore.getState().goTo('evaluations')
  })
  // The section's code comes in a chunk of its own: the list shows once it is there.
  const shown = await screen.findByRole('listbox', { name: 'Evaluations' }, { timeout: 10_000 })
  // …and its first page of rows a moment later (the list may appear before they are drawn).
  await within(shown).findAllByRole('option', {}, { timeout: 10_000 })
})

afterEach(() => {
  unsizeScrollAreas()
  removeApi()
})

const list = () => screen.getByRole('listbox', { name: 'Evaluations' })

describe('the evaluations list', () => {
  it('shows rows with verdicts, scores and ratings, a page at a time', () => {
    const options = within(list()).getAllByRole('option')
    expect(options.length).toBeGreaterThan(5)
    // Not all 120: the list draws what fits, and asked for one page.
    expect(options.length).toBeLessThan(60)
    const first = options[0] as HTMLElement
    expect(first.textContent).toContain('a lighthouse on a cliff, take 1')
    expect(first.textContent).toContain('Failed')
    expect(first.textContent).toContain('31')
    expect(within(first).getByLabelText('Not rated')).toBeTruthy()
    expect(main.listed).toEqual([expect.objectContaining({ text: '', limit: 60, cursor: null })])
  })

  it('asks the main process again with the filters and the words', async () => {
    await settled(() => {
      fireEvent.change(screen.getByRole('combobox', { name: 'Verdict' }), {
        target: { value: 'passed' },
      })
    })
    expect(main.listed.at(-1)).toMatchObject({ verdict: 'passed', cursor: null })
    const shown = within(list()).getAllByRole('option')
    expect(shown.every((o) => o.textContent.includes('Passed'))).toBe(true)

    fireEvent.change(screen.getByRole('searchbox', { name: 'Search the evaluations' }), {
      target: { value: 'take 12' },
    })
    await waitFor(() => {
      expect(main.listed.at(-1)).toMatchObject({ text: 'take 12', verdict: 'passed' })
    })
    // "take 12" and "take 120", both passed (even).
    await waitFor(() => {
      expect(
        within(list())
          .getAllByRole('option')
          .map((o) => o.id),
      ).toEqual([`evaluation-row-${u(12)}`, `evaluation-row-${u(120)}`])
    })

    await settled(() => {
      fireEvent.click(screen.getByRole('button', { name: 'Clear' }))
    })
    expect(main.listed.at(-1)).toEqual(expect.objectContaining({ text: '', cursor: null }))
    expect(main.listed.at(-1)).not.toHaveProperty('verdict')
  })
})

describe('one evaluation', () => {
  async function openFirst() {
    const first = within(list()).getAllByRole('option')[0] as HTMLElement
    await settled(() => {
      fireEvent.click(first)
    })
  }

  it('shows the verdict, the score, the judges and the attempts, and Esc goes back', async () => {
    await openFirst()
    expect(main.asked).toEqual([`get ${u(1)}`, `refresh ${u(1)}`])
    const judges = screen.getByRole('region', { name: 'Judges' })
    expect(
      within(judges)
        .getAllByRole('article')
        .map((a) => a.getAttribute('aria-label')),
    ).toEqual(['Judge Composition', 'Judge Anatomy'])
    expect(judges.textContent).toContain('Confidence91%')
    expect(judges.textContent).toContain('Six fingers')
    expect(screen.getByLabelText('Score 31')).toBeTruthy()
    expect(screen.getByRole('region', { name: 'Top issues' }).textContent).toContain('Six fingers')

    const attempts = screen.getByRole('navigation', { name: 'Attempts' })
    await settled(() => {
      fireEvent.click(within(attempts).getByRole('button', { name: /Attempt 1/ }))
    })
    expect(main.asked).toContain(`get ${u(7)}`)

    await settled(() => {
      fireEvent.keyDown(window, { key: 'Escape' })
    })
    expect(screen.queryByRole('region', { name: 'Judges' })).toBeNull()
    expect(list().closest('[hidden]')).toBeNull()
  })

  it('gives feedback with a reason, shows it pending offline, and lets you change your mind', async () => {
    await openFirst()
    main.outbox = 'pending'
    const feedback = screen.getByRole('region', { name: 'Your feedback' })
    fireEvent.click(within(feedback).getByRole('button', { name: 'Thumbs down' }))
    const popover = within(feedback).getByRole('dialog', { name: 'Why?' })
    fireEvent.change(within(popover).getByRole('textbox'), { target: { value: ' Six fingers ' } })
    await settled(() => {
      fireEvent.click(within(popover).getByRole('button', { name: 'Send thumbs down' }))
    })
    expect(main.rated).toEqual([{ id: u(1), rating: 'down', reason: 'Six fingers' }])
    expect(within(feedback).getByRole('status').textContent).toBe(
      'Pending — will be sent when online',
    )
    const down = within(feedback).getByRole('button', { name: 'Thumbs down' })
    expect(down.getAttribute('aria-pressed')).toBe('true')

    fireEvent.click(within(feedback).getByRole('button', { name: 'Thumbs up' }))
    await settled(() => {
      fireEvent.click(within(feedback).getByRole('button', { name: 'Send thumbs up' }))
    })
    expect(main.rated.at(-1)).toEqual({ id: u(1), rating: 'up' })
    expect(
      within(feedback).getByRole('button', { name: 'Thumbs up' }).getAttribute('aria-pressed'),
    ).toBe('true')

    // Back in the list, the row shows the rating waiting to be sent.
    await settled(() => {
      fireEvent.click(screen.getByRole('button', { name: /^← Evaluations/ }))
    })
    const first = within(list()).getAllByRole('option')[0] as HTMLElement
    expect(within(first).getByLabelText('Thumbs up (waiting to be sent)')).toBeTruthy()

    // Once sent, the page says so no more.
    main.outbox = 'sent'
    main.pending.clear()
    await openFirst()
    await settled(() => {
      fireEvent.click(
        within(screen.getByRole('region', { name: 'Your feedback' })).getByRole('button', {
          name: 'Thumbs up',
        }),
      )
    })
    await settled(() => {
      fireEvent.click(screen.getByRole('button', { name: 'Send thumbs up' }))
    })
    expect(screen.getByRole('region', { name: 'Your feedback' }).textContent).not.toContain(
      'Pending',
    )
  })
})

describe('a rating the outbox sends later', () => {
  it('drops the pending mark as soon as the outbox sent it, without reopening the page', async () => {
    await settled(() => {
      fireEvent.click(within(list()).getAllByRole('option')[0] as HTMLElement)
    })
    main.outbox = 'pending'
    const feedback = screen.getByRole('region', { name: 'Your feedback' })
    fireEvent.click(within(feedback).getByRole('button', { name: 'Thumbs up' }))
    await settled(() => {
      fireEvent.click(within(feedback).getByRole('button', { name: 'Send thumbs up' }))
    })
    expect(within(feedback).getByRole('status').textContent).toBe(
      'Pending — will be sent when online',
    )

    // Online again: the outbox sends it and the main process says the evaluations changed.
    const index = main.rows.findIndex((r) => r.id === u(1))
    main.rows[index] = { ...(main.rows[index] as EvaluationRow), rating: 'up' }
    main.pending.clear()
    await settled(() => {
      main.emit('mirror.changed', { collections: ['evaluations'] })
    })
    expect(feedback.textContent).not.toContain('Pending')
    expect(
      within(feedback).getByRole('button', { name: 'Thumbs up' }).getAttribute('aria-pressed'),
    ).toBe('true')
  })
})

describe('submitting an evaluation', () => {
  it('sends a local path with the chosen options, and says plainly when offline', async () => {
    await settled(() => {
      fireEvent.click(screen.getByRole('button', { name: 'Submit an evaluation…' }))
    })
    const dialog = screen.getByRole('dialog', { name: 'Submit an evaluation' })
    const submit = within(dialog).getByRole('button', { name: 'Submit' })
    expect((submit as HTMLButtonElement).disabled).toBe(true)
    fireEvent.click(within(dialog).getByLabelText('A file on this computer'))
    fireEvent.change(within(dialog).getByLabelText('Full path of an image file'), {
      target: { value: '/home/me/poster.png' },
    })
    fireEvent.click(within(dialog).getByLabelText('Quick — fewer judges, cheaper'))
    main.submitAnswer = { code: 'OFFLINE', message: 'The service cannot be reached.' }
    await settled(() => {
      fireEvent.click(submit)
    })
    expect(main.submitted).toEqual([{ image: { path: '/home/me/poster.png' }, jobClass: 'quick' }])
    expect(within(dialog).getByRole('alert').textContent).toContain(
      'The service cannot be reached.',
    )

    main.submitAnswer = null
    await settled(() => {
      fireEvent.click(submit)
    })
    expect(screen.queryByRole('dialog', { name: 'Submit an evaluation' })).toBeNull()
    // The new evaluation opens, pending.
    expect(screen.getByRole('heading', { level: 2, name: 'submitted' })).toBeTruthy()
    expect(screen.getByRole('region', { name: 'Your feedback' })).toBeTruthy()
  })
})
