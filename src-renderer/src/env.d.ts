import type { AtelierApi, DroppedFiles } from '../../src-shared/ipc/api'

declare global {
  interface Window {
    /** Set by the preload (desktop) or the browser bridge; absent when the page is opened on its own. */
    atelier?: AtelierApi
    /** Set by the desktop preload only: where a dropped file lies (see `DroppedFiles`). */
    atelierFiles?: DroppedFiles
  }
}
