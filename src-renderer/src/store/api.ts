import type { StateCreator } from 'zustand'
import type { AtelierApi } from '../../../src-shared/ipc/api'
import type { AppState } from './index'

/**
 * How a slice reaches the main process. Asked at each call, not once when the store is made:
 * the transport can come after the store (a test installs its double into a running store).
 * Null when the page was opened without the bridge; each slice says so in its own words.
 */
export type ApiSource = () => AtelierApi | null

/** A slice of the app's store that talks to the main process through the API it is given. */
export type SliceWithApi<T> = (api: ApiSource) => StateCreator<AppState, [], [], T>
