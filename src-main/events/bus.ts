import type { IpcEventName, IpcEvents } from '../../src-shared/ipc'

/** Hears every event: the window's and the browser bridge's push, the thread's relay. */
export type EventSink = <E extends IpcEventName>(event: E, payload: IpcEvents[E]) => void

/**
 * The one fan-out of the events a service pushes to whoever shows the app, typed by
 * `IpcEvents`. A listener that throws is reported (`onListenerError`) and the others still
 * hear the event: one closed window must not silence the rest.
 */
export class EventBus {
  readonly #sinks = new Set<EventSink>()

  constructor(
    private readonly onListenerError: (event: IpcEventName, error: unknown) => void = () =>
      undefined,
  ) {}

  /** Every event from now on; returns the unsubscribe. */
  readonly on = (sink: EventSink): (() => void) => {
    this.#sinks.add(sink)
    return () => {
      this.#sinks.delete(sink)
    }
  }

  readonly emit: EventSink = (event, payload) => {
    for (const sink of this.#sinks) {
      try {
        sink(event, payload)
      } catch (error) {
        this.onListenerError(event, error)
      }
    }
  }

  /** Forgets every listener (closing). */
  clear(): void {
    this.#sinks.clear()
  }
}
