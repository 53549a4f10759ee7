import type { StateCreator } from 'zustand'
import type { AppState } from './index'

export type ToastTone = 'info' | 'success' | 'warning' | 'error'

export interface ToastAction {
  label: string
  run: () => void
}

export interface ToastInput {
  tone?: ToastTone
  title: string
  /** A sentence under the title: the details, what to do. */
  message?: string
  /** One button; using it also dismisses the toast. */
  action?: ToastAction
  /** How long it stays; null: until dismissed. Defaults by tone and action (`toastMs`). */
  durationMs?: number | null
}

export interface Toast {
  id: number
  tone: ToastTone
  title: string
  message: string | null
  action: ToastAction | null
}

export interface ToastSlice {
  /** Oldest first; at most `MAX_TOASTS`. */
  toasts: Toast[]
  /** Shows a toast, dropping the oldest beyond `MAX_TOASTS`; answers its id. */
  pushToast: (toast: ToastInput) => number
  dismissToast: (id: number) => void
}

/** More than this at once is noise: the oldest go first. */
export const MAX_TOASTS = 3
export const TOAST_MS = 6_000
/** A toast with a button, or an error, stays longer: there is something to read or do. */
export const TOAST_LONG_MS = 12_000

export function toastMs(input: ToastInput): number | null {
  if (input.durationMs !== undefined) return input.durationMs
  return input.action || input.tone === 'error' ? TOAST_LONG_MS : TOAST_MS
}

export const createToastSlice: StateCreator<AppState, [], [], ToastSlice> = (set, get) => {
  let nextId = 1
  const timers = new Map<number, ReturnType<typeof setTimeout>>()

  const forget = (id: number) => {
    const timer = timers.get(id)
    if (timer !== undefined) clearTimeout(timer)
    timers.delete(id)
  }

  return {
    toasts: [],
    pushToast: (input) => {
      const id = nextId++
      const toast: Toast = {
        id,
        tone: input.tone ?? 'info',
        title: input.title,
        message: input.message ?? null,
        action: input.action ?? null,
      }
      const all = [...get().toasts, toast]
      const dropped = all.slice(0, Math.max(0, all.length - MAX_TOASTS))
      for (const old of dropped) forget(old.id)
      set({ toasts: all.slice(-MAX_TOASTS) })
      const ms = toastMs(input)
      if (ms !== null) {
        timers.set(
          id,
          setTimeout(() => {
            get().dismissToast(id)
          }, ms),
        )
      }
      return id
    },
    dismissToast: (id) => {
      forget(id)
      if (get().toasts.some((toast) => toast.id === id)) {
        set({ toasts: get().toasts.filter((toast) => toast.id !== id) })
      }
    },
  }
}
