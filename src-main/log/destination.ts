import { closeSync, fstatSync, openSync, renameSync, statSync, writeSync } from 'node:fs'

/** Above this a log file is set aside as `<file>.1` (one generation kept). */
export const MAX_LOG_BYTES = 5 * 1024 * 1024

/**
 * A synchronous, size-capped log file. Every line is on disk (in the OS's cache) when `write`
 * returns, so a crash right after loses nothing. When a line would take the file over the cap
 * (or the file already is over it when opened), the file is renamed `<file>.1`, replacing the
 * previous one, and a new file is started: the logs never hold more than about twice the cap.
 *
 * A log that cannot be written (disk full, folder removed) must never stop the work it
 * describes, so write errors are swallowed and the line is lost.
 */
export class RotatingFile {
  private fd: number | null = null
  private size = 0

  constructor(
    readonly file: string,
    private readonly maxBytes: number = MAX_LOG_BYTES,
  ) {
    if (fileSize(file) > maxBytes) this.setAside()
    this.open()
  }

  write(line: string): boolean {
    const bytes = Buffer.from(line, 'utf8')
    try {
      if (this.fd !== null && this.size > 0 && this.size + bytes.length > this.maxBytes) {
        this.closeFd()
        this.setAside()
        this.open()
      }
      const fd = this.fd
      if (fd === null) return true
      let offset = 0
      while (offset < bytes.length) {
        offset += writeSync(fd, bytes, offset, bytes.length - offset)
      }
      this.size += bytes.length
    } catch {
      // See the class comment: the line is dropped, the caller goes on.
    }
    return true
  }

  close(): void {
    this.closeFd()
  }

  private open(): void {
    try {
      // Owner-only: lines can carry prompts and file names.
      this.fd = openSync(this.file, 'a', 0o600)
      this.size = fstatSync(this.fd).size
    } catch {
      this.fd = null
    }
  }

  private setAside(): void {
    try {
      renameSync(this.file, `${this.file}.1`)
    } catch {
      // Another process rotated it first, or it is gone: either way there is room now.
    }
  }

  private closeFd(): void {
    if (this.fd === null) return
    try {
      closeSync(this.fd)
    } catch {
      // Already closed by the OS (the process is going away).
    }
    this.fd = null
  }
}

function fileSize(file: string): number {
  try {
    return statSync(file).size
  } catch {
    return 0
  }
}
