// @vitest-environment happy-dom
import { act, cleanup, fireEvent, render, screen, within } from '@testing-library/react'
import { createElement } from 'react'
import { afterEach, describe, expect, it, vi } from 'vitest'
import type { AssetDetail } from '../../src-shared/domain/assets'
import type { AssetResult, SearchQueryInput } from '../../src-shared/domain/search'
import type { AtelierApi } from '../../src-shared/ipc/api'
import type { IpcResult } from '../../src-shared/ipc/result'
import {
  EnumField,
  MAX_SEED,
  NumberField,
  SeedField,
  ValueField,
  type FieldProps,
  type PortSpec,
} from '../../src-renderer/src/flows/inputs'
import { unavailableApi } from './unavailable-api'

afterEach(() => {
  cleanup()
})

function spec(overrides: Partial<PortSpec>): PortSpec {
  return {
    name: 'steps',
    label: 'Steps',
    variableType: 'integer',
    validatorCode: null,
    validatorAttrs: null,
    required: false,
    defaultValue: null,
    description: null,
    ...overrides,
  }
}

const steps = spec({ validatorCode: 'range', validatorAttrs: { min: 1, max: 10 }, defaultValue: 4 })

describe('the number field', () => {
  it('takes its min and max from the range validator and says when a value is out of range', () => {
    const onChange = vi.fn<FieldProps['onChange']>()
    render(createElement(NumberField, { spec: steps, value: 5, onChange }))
    const field = screen.getByRole<HTMLInputElement>('spinbutton', { name: 'Steps' })
    expect(field.value).toBe('5')
    expect(field.min).toBe('1')
    expect(field.max).toBe('10')
    expect(field.step).toBe('1')
    expect(field.placeholder).toBe('Default: 4')

    fireEvent.change(field, { target: { value: '7' } })
    expect(onChange).toHaveBeenLastCalledWith(7)
    expect(screen.queryByTestId('field-hint')).toBeNull()

    fireEvent.change(field, { target: { value: '20' } })
    expect(onChange).toHaveBeenLastCalledWith(20)
    expect(screen.getByTestId('field-hint').textContent).toBe('Must be between 1 and 10.')
    expect(field.getAttribute('aria-invalid')).toBe('true')

    fireEvent.change(field, { target: { value: '' } })
    expect(onChange).toHaveBeenLastCalledWith(null)
    expect(screen.queryByTestId('field-hint')).toBeNull()
  })

  it('keeps a whole-number port whole, and follows a value changed from outside', () => {
    const onChange = vi.fn<FieldProps['onChange']>()
    const { rerender } = render(createElement(NumberField, { spec: steps, value: 5, onChange }))
    const field = screen.getByRole<HTMLInputElement>('spinbutton', { name: 'Steps' })
    fireEvent.change(field, { target: { value: '2.5' } })
    expect(onChange).not.toHaveBeenCalled()
    expect(screen.getByTestId('field-hint').textContent).toBe('Enter a whole number.')

    // An undo sets the value back: the field shows it.
    rerender(createElement(NumberField, { spec: steps, value: 3, onChange }))
    expect(field.value).toBe('3')
    expect(screen.queryByTestId('field-hint')).toBeNull()
  })

  it('lets a decimal number be a fraction, and shows the check problem it is given', () => {
    const onChange = vi.fn<FieldProps['onChange']>()
    render(
      createElement(NumberField, {
        spec: spec({ label: 'Strength', variableType: 'number' }),
        value: null,
        onChange,
        problem: 'Input "strength" must be between 0 and 1, but it is 2.',
      }),
    )
    const field = screen.getByRole<HTMLInputElement>('spinbutton', { name: 'Strength' })
    expect(field.step).toBe('any')
    fireEvent.change(field, { target: { value: '0.35' } })
    expect(onChange).toHaveBeenLastCalledWith(0.35)
    expect(screen.getByTestId('problem-marker').textContent).toBe(
      'Input "strength" must be between 0 and 1, but it is 2.',
    )
  })
})

describe('the seed field', () => {
  const seed = spec({ name: 'seed', label: 'Seed', variableType: 'seed' })

  it('rolls a whole number within the validator range, both ends included', () => {
    const onChange = vi.fn<FieldProps['onChange']>()
    const ranged = { ...seed, validatorCode: 'range', validatorAttrs: { min: 100, max: 200 } }
    const { rerender } = render(
      createElement(SeedField, { spec: ranged, value: 150, onChange, random: () => 0 }),
    )
    const dice = screen.getByRole('button', { name: 'Roll a random Seed' })
    fireEvent.click(dice)
    expect(onChange).toHaveBeenLastCalledWith(100)

    rerender(
      createElement(SeedField, { spec: ranged, value: 150, onChange, random: () => 0.9999999 }),
    )
    fireEvent.click(dice)
    expect(onChange).toHaveBeenLastCalledWith(200)
  })

  it('rolls a fresh seed of 0 or more with the real randomness, and refuses a negative one', () => {
    const onChange = vi.fn<FieldProps['onChange']>()
    render(createElement(SeedField, { spec: seed, value: 7, onChange }))
    const dice = screen.getByRole('button', { name: 'Roll a random Seed' })
    const rolled = new Set<unknown>()
    for (let i = 0; i < 5; i++) {
      fireEvent.click(dice)
      const value = onChange.mock.lastCall?.[0]
      expect(Number.isSafeInteger(value)).toBe(true)
      expect(value as number).toBeGreaterThanOrEqual(0)
      expect(value as number).toBeLessThanOrEqual(MAX_SEED)
      rolled.add(value)
    }
    expect(rolled.size).toBeGreaterThan(1)

    const field = screen.getByRole<HTMLInputElement>('spinbutton', { name: 'Seed' })
    expect(field.min).toBe('0')
    onChange.mockClear()
    fireEvent.change(field, { target: { value: '-3' } })
    expect(screen.getByTestId('field-hint').textContent).toBe(`Must be at least 0.`)
  })
})

describe('the enum field', () => {
  const sampler = spec({
    name: 'sampler',
    label: 'Sampler',
    variableType: 'string',
    validatorCode: 'enum',
    validatorAttrs: { values: ['euler', 'ddim', 2] },
    defaultValue: 'euler',
  })

  it("offers the validator's values, keeps their types, and clears back to the default", () => {
    const onChange = vi.fn<FieldProps['onChange']>()
    render(createElement(EnumField, { spec: sampler, value: 'ddim', onChange }))
    const select = screen.getByRole<HTMLSelectElement>('combobox', { name: 'Sampler' })
    expect([...select.options].map((option) => option.textContent)).toEqual([
      'Default (euler)',
      'euler',
      'ddim',
      '2',
    ])
    expect(select.selectedOptions[0]?.textContent).toBe('ddim')

    fireEvent.change(select, { target: { value: '2' } })
    expect(onChange).toHaveBeenLastCalledWith(2)
    fireEvent.change(select, { target: { value: '0' } })
    expect(onChange).toHaveBeenLastCalledWith('euler')
    fireEvent.change(select, { target: { value: '' } })
    expect(onChange).toHaveBeenLastCalledWith(null)
  })
})

describe('the field chosen for a port', () => {
  it('follows the variable type and validator', () => {
    const onChange = vi.fn<FieldProps['onChange']>()
    const field = (overrides: Partial<PortSpec>, value: unknown = null) =>
      render(createElement(ValueField, { spec: spec(overrides), value, onChange }))

    field({ label: 'Prompt', variableType: 'text' }, 'a cat')
    expect(screen.getByRole<HTMLTextAreaElement>('textbox', { name: 'Prompt' }).value).toBe('a cat')
    field({ label: 'Upscale', variableType: 'boolean', defaultValue: true })
    expect(screen.getByRole<HTMLInputElement>('checkbox').checked).toBe(true)
    field({ label: 'Photo', variableType: 'image' }, 'https://example.com/cat.png')
    // The window's CSP loads no remote picture: a web address is not drawn, and says so.
    expect(screen.queryByRole('img', { name: 'Photo preview' })).toBeNull()
    expect(screen.getByText(/A web address is fetched when the flow runs/)).toBeTruthy()
    fireEvent.change(screen.getByRole('textbox', { name: 'Photo URL' }), {
      target: { value: ' https://example.com/dog.png ' },
    })
    expect(onChange).toHaveBeenLastCalledWith('https://example.com/dog.png')
    field({ label: 'Mode', variableType: 'enum', validatorAttrs: { values: ['fast', 'good'] } })
    expect(screen.getByRole('combobox', { name: 'Mode' })).toBeTruthy()
    field({ label: 'Frames', variableType: 'image[]' })
    fireEvent.change(screen.getByRole('textbox', { name: 'Frames (JSON)' }), {
      target: { value: '["a.png", "b.png"]' },
    })
    expect(onChange).toHaveBeenLastCalledWith(['a.png', 'b.png'])
  })
})

describe('the asset picker of an image input', () => {
  const ok = <T>(value: T): Promise<IpcResult<T>> => Promise.resolve({ ok: true, value })
  const sha = (n: number) => String(n).padStart(64, 'a')
  const found = (n: number, title: string, folderPath: string | null): AssetResult => ({
    kind: 'asset',
    id: `asset-${n}`,
    orgId: 'org',
    createdAt: '2026-03-01T09:30:00Z',
    title,
    matchedIn: null,
    snippet: null,
    score: null,
    mediaType: 'image',
    folderPath,
    sizeBytes: 1000,
  })
  const library = [found(1, 'dunes.png', '/Coast shoot'), found(2, 'gulls.png', null)]

  /** The mirror's side: the search, an asset's details and its preview from the media store. */
  function mirror() {
    const searches: SearchQueryInput[] = []
    const previews: unknown[] = []
    const gets: string[] = []
    const base = unavailableApi()
    const api: AtelierApi = {
      ...base,
      search: {
        ...base.search,
        query: (query) => {
          searches.push(query)
          const words = query.text ?? ''
          const items = library.filter((a) => a.title.includes(words))
          return ok({ mode: words ? 'ranked' : 'list', items, next: null, bounded: false })
        },
      },
      assets: {
        ...base.assets,
        get: ({ id }) => {
          gets.push(id)
          const item = library.find((a) => a.id === id)
          if (!item) {
            return Promise.resolve({
              ok: false,
              error: { code: 'NOT_FOUND', message: 'No such asset.' },
            })
          }
          const n = Number(id.slice('asset-'.length))
          return ok<AssetDetail>({
            id,
            name: item.title,
            folderId: null,
            mediaType: 'image',
            contentType: 'image/png',
            sizeBytes: item.sizeBytes,
            sha256: sha(n),
            width: 64,
            height: 64,
            durationMs: null,
            status: 'ready',
            createdAt: item.createdAt,
            url: `https://files.example.com/${id}.png`,
            folderPath: item.folderPath,
            updatedAt: item.createdAt,
            metadata: {},
            usedBy: [],
            usedByMore: false,
          })
        },
      },
      media: {
        ...base.media,
        preview: (args) => {
          previews.push(args)
          return ok({ sha256: args.sha256, dataUrl: `data:image/webp;base64,${args.sha256}` })
        },
      },
    }
    window.atelier = api
    return { searches, previews, gets }
  }

  afterEach(() => {
    delete window.atelier
  })

  const photo = spec({ name: 'image', label: 'Photo', variableType: 'image' })

  it('searches the mirror’s images, sets the input to the asset chosen and previews it', async () => {
    const seen = mirror()
    const onChange = vi.fn<FieldProps['onChange']>()
    const { rerender } = render(createElement(ValueField, { spec: photo, value: null, onChange }))
    fireEvent.click(screen.getByRole('button', { name: 'Choose asset…' }))
    const list = screen.getByRole('listbox', { name: 'Image assets' })
    expect(await within(list).findByRole('option', { name: /gulls\.png/ })).toBeTruthy()
    expect(seen.searches[0]).toMatchObject({ text: '', kind: 'assets', mediaType: 'image' })

    fireEvent.change(screen.getByRole('searchbox', { name: 'Search the assets' }), {
      target: { value: 'dunes' },
    })
    await vi.waitFor(() => {
      expect(within(list).queryByRole('option', { name: /gulls/ })).toBeNull()
    })
    expect(seen.searches.at(-1)).toMatchObject({ text: 'dunes', mediaType: 'image' })
    fireEvent.click(within(list).getByRole('option', { name: /dunes\.png/ }))
    expect(onChange).toHaveBeenLastCalledWith('asset-1')
    // Chosen: the list closes.
    expect(screen.queryByRole('listbox')).toBeNull()

    // The document now holds the asset's id: the field names it and draws it from the media
    // store (a data URL), never from its web address.
    rerender(createElement(ValueField, { spec: photo, value: 'asset-1', onChange }))
    const preview = await screen.findByRole('img', { name: 'Photo preview' })
    expect(preview.getAttribute('src')).toBe(`data:image/webp;base64,${sha(1)}`)
    expect(seen.gets).toEqual(['asset-1'])
    expect(seen.previews).toEqual([
      { sha256: sha(1), size: 256, url: 'https://files.example.com/asset-1.png' },
    ])
    expect(screen.getByText('dunes.png · /Coast shoot')).toBeTruthy()
    expect(screen.getByRole<HTMLInputElement>('textbox', { name: 'Photo URL' }).value).toBe(
      'asset-1',
    )

    // Opened again, the chosen one is marked.
    fireEvent.click(screen.getByRole('button', { name: 'Choose asset…' }))
    const chosen = await screen.findByRole('option', { name: /dunes\.png/ })
    expect(chosen.getAttribute('aria-selected')).toBe('true')
  })

  it('chooses with the keyboard, and looks for videos for a video input', async () => {
    const seen = mirror()
    const onChange = vi.fn<FieldProps['onChange']>()
    render(
      createElement(ValueField, {
        spec: spec({ name: 'clip', label: 'Clip', variableType: 'video' }),
        value: null,
        onChange,
      }),
    )
    fireEvent.click(screen.getByRole('button', { name: 'Choose asset…' }))
    const option = await screen.findByRole('option', { name: /gulls\.png/ })
    expect(screen.getByRole('listbox', { name: 'Video assets' })).toBeTruthy()
    expect(seen.searches[0]).toMatchObject({ mediaType: 'video' })
    act(() => {
      fireEvent.keyDown(option, { key: 'Enter' })
    })
    expect(onChange).toHaveBeenLastCalledWith('asset-2')
  })

  it('says so when an id names no asset of the mirror', async () => {
    mirror()
    render(createElement(ValueField, { spec: photo, value: 'asset-9', onChange: vi.fn() }))
    expect(await screen.findByText('No asset with this id in the mirror yet.')).toBeTruthy()
    expect(screen.queryByRole('img')).toBeNull()
  })
})
