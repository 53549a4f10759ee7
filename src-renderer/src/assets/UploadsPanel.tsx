import { useVirtualizer } from '@tanstack/react-virtual'
import { useState } from 'react'
import { useShallow } from 'zustand/react/shallow'
import type { UploadFileRow, UploadSummary } from '../../../src-shared/domain/assets'
import { useAppStore } from '../store'
import {
  bytesWords,
  etaWords,
  FILE_STATE_WORDS,
  LEFT_OUT_WORDS,
  plural,
  rateWords,
  UPLOAD_STATE_WORDS,
} from './words'

const FILE_ROW = 30

function Bar({ done, total, label }: { done: number; total: number; label: string }) {
  const percent = total === 0 ? 0 : Math.min(100, Math.round((done / total) * 100))
  return (
    <div
      className="upload-bar"
      role="progressbar"
      aria-label={label}
      aria-valuemin={0}
      aria-valuemax={100}
      aria-valuenow={percent}
    >
      <span style={{ width: `${percent}%` }} />
    </div>
  )
}

/** The uploads of this session with their progress, and the watched folders. */
export function UploadsPanel() {
  const { uploads, watches, close, choose, unwatch } = useAppStore(
    useShallow((s) => ({
      uploads: s.uploads,
      watches: s.watchedFolders,
      close: s.setUploadsOpen,
      choose: s.chooseUploadFolder,
      unwatch: s.unwatchFolder,
    })),
  )
  return (
    <aside className="uploads-panel" aria-label="Uploads">
      <div className="asset-detail-head">
        <h2>Uploads</h2>
        <button
          type="button"
          className="small-button"
          aria-label="Close the uploads"
          onClick={() => {
            close(false)
          }}
        >
          ✕
        </button>
      </div>
      {uploads.length === 0 ? (
        <p className="muted">
          Nothing uploaded yet. Choose a folder: its sub-folders become asset folders.
        </p>
      ) : (
        <ul className="upload-list">
          {uploads.map((upload) => (
            <UploadCard key={upload.id} upload={upload} />
          ))}
        </ul>
      )}
      <section className="watch-folders" aria-label="Watched folders">
        <div className="watch-head">
          <h3>Watched folders</h3>
          <button
            type="button"
            className="small-button"
            onClick={() => {
              void choose()
            }}
          >
            Add…
          </button>
        </div>
        {watches.length === 0 ? (
          <p className="muted">A watched folder is uploaded again whenever files appear in it.</p>
        ) : (
          <ul>
            {watches.map((watch) => (
              <li key={watch.id} className="watch-row">
                <span className={`watch-dot ${watch.state}`} aria-hidden="true" />
                <span className="watch-path" title={watch.path}>
                  {watch.path}
                </span>
                <span className="muted">
                  {watch.state === 'failed' && watch.error ? watch.error.message : watch.state}
                </span>
                <button
                  type="button"
                  className="link-button"
                  aria-label={`Stop watching ${watch.path}`}
                  onClick={() => {
                    void unwatch(watch.id)
                  }}
                >
                  Stop
                </button>
              </li>
            ))}
          </ul>
        )}
      </section>
    </aside>
  )
}

/** The files the upload left out, each with why: a count alone leaves one guessing which. */
function LeftOutList({ upload }: { upload: UploadSummary }) {
  const named = upload.leftOut ?? []
  const more = upload.skipped - named.length
  return (
    <details className="upload-left-out">
      <summary>Which {upload.skipped === 1 ? 'file was' : 'files were'} left out</summary>
      <ul aria-label="Left out">
        {named.map((entry) => (
          <li key={entry.relativePath}>
            <strong>{entry.relativePath}</strong>: {LEFT_OUT_WORDS[entry.reason]}
          </li>
        ))}
        {more > 0 ? <li className="muted">And {more.toLocaleString('en-US')} more.</li> : null}
      </ul>
    </details>
  )
}

function UploadCard({ upload }: { upload: UploadSummary }) {
  const { act, loadFiles, files } = useAppStore(
    useShallow((s) => ({
      act: s.uploadAction,
      loadFiles: s.loadUploadFiles,
      files: s.uploadFiles[upload.id],
    })),
  )
  const [open, setOpen] = useState(false)
  const running = ['scanning', 'folders', 'uploading'].includes(upload.state)
  const done = upload.files.done + upload.files.duplicates + upload.files.failed
  const eta = running ? etaWords(upload.etaSeconds) : null
  const folder = upload.root.split(/[\\/]/).filter(Boolean).at(-1) ?? upload.root
  // Files dropped on the window: named by the file, or by how many from which folder.
  const named = upload.named
  const name = !named
    ? folder
    : named.count === 1
      ? (named.first.split('/').at(-1) ?? named.first)
      : `${plural(named.count, 'file')} from ${folder}`
  return (
    <li className={`upload-card ${upload.state}`} aria-label={`Upload of ${name}`}>
      <div className="upload-card-head">
        <strong title={upload.root}>{name}</strong>
        <span className="upload-state">
          {upload.watched ? 'Watched · ' : ''}
          {UPLOAD_STATE_WORDS[upload.state]}
        </span>
      </div>
      <Bar done={upload.bytes.done} total={upload.bytes.total} label={`Progress of ${name}`} />
      <div className="upload-numbers">
        <span>
          {done.toLocaleString()} of {plural(upload.files.total, 'file', 'files')}
        </span>
        <span>
          {bytesWords(upload.bytes.done)} of {bytesWords(upload.bytes.total)}
        </span>
        {running && upload.rate > 0 ? <span>{rateWords(upload.rate)}</span> : null}
        {eta ? <span>{eta}</span> : null}
      </div>
      <div className="upload-outcomes">
        {upload.files.duplicates > 0 ? (
          <span className="chip">
            {plural(upload.files.duplicates, 'duplicate', 'duplicates')} skipped
          </span>
        ) : null}
        {upload.skipped > 0 ? (
          <span className="chip" title="Hidden, system or not an image or video">
            {plural(upload.skipped, 'file', 'files')} left out
          </span>
        ) : null}
        {upload.files.failed > 0 ? (
          <span className="chip danger">{plural(upload.files.failed, 'failure', 'failures')}</span>
        ) : null}
        {upload.unreadable > 0 ? (
          <span className="chip danger">
            {plural(upload.unreadable, 'unreadable', 'unreadable')}
          </span>
        ) : null}
        {upload.folderName !== null ? (
          <span className="muted">into /{upload.folderName}</span>
        ) : null}
      </div>
      {upload.error ? <p className="upload-error">{upload.error.message}</p> : null}
      {upload.leftOut && upload.leftOut.length > 0 ? <LeftOutList upload={upload} /> : null}
      {upload.failures.length > 0 ? (
        <ul className="upload-failures" aria-label="Failures">
          {upload.failures.map((failure) => (
            <li key={failure.relativePath}>
              <strong>{failure.relativePath}</strong>: {failure.message}
            </li>
          ))}
        </ul>
      ) : null}
      <div className="upload-actions">
        {upload.state === 'uploading' ||
        upload.state === 'scanning' ||
        upload.state === 'folders' ? (
          upload.watched ? null : (
            <button
              type="button"
              className="small-button"
              onClick={() => {
                void act(upload.id, 'pause')
              }}
            >
              Pause
            </button>
          )
        ) : null}
        {upload.state === 'paused' || upload.state === 'interrupted' ? (
          <button
            type="button"
            className="small-button"
            onClick={() => {
              void act(upload.id, 'resume')
            }}
          >
            Resume
          </button>
        ) : null}
        {(running || upload.state === 'paused') && !upload.watched ? (
          <button
            type="button"
            className="small-button danger"
            onClick={() => {
              void act(upload.id, 'cancel')
            }}
          >
            Cancel
          </button>
        ) : null}
        {!running && upload.state !== 'paused' && !upload.watched ? (
          <button
            type="button"
            className="small-button"
            onClick={() => {
              void act(upload.id, 'dismiss')
            }}
          >
            {upload.state === 'interrupted' ? 'Forget' : 'Clear'}
          </button>
        ) : null}
        {upload.state !== 'interrupted' ? (
          <button
            type="button"
            className="link-button"
            aria-expanded={open}
            onClick={() => {
              if (!open) void loadFiles(upload.id)
              setOpen(!open)
            }}
          >
            {open ? 'Hide files' : 'Show files'}
          </button>
        ) : null}
      </div>
      {open ? <FileRows rows={files ?? []} /> : null}
    </li>
  )
}

/** One row per file that has started; virtualized, a folder may hold thousands. */
function FileRows({ rows }: { rows: UploadFileRow[] }) {
  const [scroller, setScroller] = useState<HTMLDivElement | null>(null)
  // eslint-disable-next-line react-hooks/incompatible-library -- its functions are read during render only
  const virtualizer = useVirtualizer({
    count: rows.length,
    getScrollElement: () => scroller,
    estimateSize: () => FILE_ROW,
    overscan: 8,
    initialRect: { width: 340, height: 240 },
  })
  if (rows.length === 0) return <p className="muted">No file has started yet.</p>
  return (
    <div ref={setScroller} className="upload-files" role="list" aria-label="Files">
      <div style={{ height: virtualizer.getTotalSize(), position: 'relative' }}>
        {virtualizer.getVirtualItems().map((item) => {
          const row = rows[item.index]
          if (!row) return null
          return (
            <div
              key={row.seq}
              role="listitem"
              className={`upload-file ${row.state}`}
              style={{ transform: `translateY(${item.start}px)`, height: item.size }}
              title={row.error?.message}
            >
              <span className="upload-file-name">{row.relativePath}</span>
              <span className="upload-file-state">{FILE_STATE_WORDS[row.state]}</span>
              <Bar done={row.bytesDone} total={row.sizeBytes} label={row.relativePath} />
            </div>
          )
        })}
      </div>
    </div>
  )
}
