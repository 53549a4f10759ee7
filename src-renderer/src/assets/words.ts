import type { LeftOutReason, UploadFileState, UploadState } from '../../../src-shared/domain/assets'

const UNITS = ['B', 'KB', 'MB', 'GB', 'TB']

/** "1.4 MB": binary steps, one decimal under ten. */
export function bytesWords(bytes: number): string {
  let value = bytes
  let unit = 0
  while (value >= 1024 && unit < UNITS.length - 1) {
    value /= 1024
    unit++
  }
  const digits = unit === 0 || value >= 10 ? 0 : 1
  return `${value.toFixed(digits)} ${UNITS[unit] ?? 'B'}`
}

export function rateWords(bytesPerSecond: number): string {
  return `${bytesWords(bytesPerSecond)}/s`
}

/** "about 3 min left"; null when there is no rate to tell from yet. */
export function etaWords(seconds: number | null): string | null {
  if (seconds === null) return null
  if (seconds <= 0) return null
  if (seconds < 60) return `${Math.ceil(seconds)} s left`
  if (seconds < 3600) return `about ${Math.round(seconds / 60)} min left`
  return `about ${(seconds / 3600).toFixed(1)} h left`
}

export const UPLOAD_STATE_WORDS: Record<UploadState, string> = {
  scanning: 'Looking through the folder',
  folders: 'Making the folders',
  uploading: 'Uploading',
  paused: 'Paused',
  finished: 'Finished',
  failed: 'Finished with failures',
  canceled: 'Canceled',
  interrupted: 'Interrupted',
}

export const FILE_STATE_WORDS: Record<UploadFileState, string> = {
  queued: 'Waiting',
  hashing: 'Checking',
  uploading: 'Uploading',
  confirming: 'Confirming',
  done: 'Uploaded',
  duplicate: 'Duplicate, skipped',
  failed: 'Failed',
}

/** Why a file was left out of an upload, as the panel lists it. */
export const LEFT_OUT_WORDS: Record<LeftOutReason, string> = {
  system: 'System file',
  hidden: 'Hidden',
  symlink: 'A link, not followed',
  specialFile: 'Not a regular file',
  excluded: 'Excluded',
  notIncluded: 'Not included',
  notMedia: 'Not an image or video',
}

const dateFormat = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short' })

export function dateWords(iso: string): string {
  const ms = Date.parse(iso)
  return Number.isNaN(ms) ? iso : dateFormat.format(ms)
}

export function durationWords(ms: number): string {
  const seconds = Math.round(ms / 100) / 10
  return seconds < 60
    ? `${seconds} s`
    : `${Math.floor(seconds / 60)} min ${Math.round(seconds % 60)} s`
}

export { plural } from '../../../src-shared/domain/plural'
