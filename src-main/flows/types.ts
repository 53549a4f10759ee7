import type {
  FlowCheck,
  FlowCheckRequest,
  FlowCreate,
  FlowImport,
  FlowRef,
  FlowRename,
  FlowRunRef,
  FlowRunResumeRequest,
  FlowRunRequest,
  FlowRunSummary,
  FlowSave,
  FlowSummary,
  FlowVersion,
  FlowVersionRef,
  FlowVersionSave,
  MediaPreview,
  MediaPreviewRequest,
  PaletteItem,
  StartedRun,
  StoredFlow,
} from '../../src-shared/domain/flow-editor'

type Awaitable<T> = T | Promise<T>

/**
 * The flow editor's services, as the window's channels (and the tests) call them. A refusal is
 * a `FlowEditorError` (or the media store's `MediaStoreError` for a preview): a coded error,
 * which reaches the window as its code and message.
 */
export interface FlowEditor {
  list(): Awaitable<FlowSummary[]>
  get(request: FlowRef): Awaitable<StoredFlow>
  create(request: FlowCreate): Awaitable<StoredFlow>
  save(request: FlowSave): Awaitable<{ updatedMs: number }>
  rename(request: FlowRename): Awaitable<FlowSummary>
  delete(request: FlowRef): Awaitable<null>
  restore(request: FlowRef): Awaitable<FlowSummary>
  import(request: FlowImport): Awaitable<StoredFlow>
  export(request: FlowRef): Awaitable<{ fileName: string; json: string }>
  saveVersion(request: FlowVersionSave): Awaitable<FlowVersion>
  restoreVersion(request: FlowVersionRef): Awaitable<StoredFlow>
  check(request: FlowCheckRequest): Awaitable<FlowCheck>
  palette(): Awaitable<PaletteItem[]>
  /** The flow's runs on this computer, newest first. */
  runs(request: FlowRef): Awaitable<FlowRunSummary[]>
  startRun(request: FlowRunRequest): Awaitable<StartedRun>
  cancelRun(request: FlowRunRef): Awaitable<null>
  /** Runs an interrupted flow run again under its id, paying for nothing twice. */
  resumeRun(request: FlowRunResumeRequest): Awaitable<StartedRun>
  /** The editor's media store owns the previews of the outputs it shows. */
  preview(request: MediaPreviewRequest): Awaitable<MediaPreview>
  /** Cancels the runs under way, waits for them to end, closes the media store. Idempotent. */
  close(): Promise<void>
}
