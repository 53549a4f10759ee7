import type { ModelMetrics } from './types'

export type AnimationFormat = 'webp' | 'gif'

export interface VideoTiming {
  frames: number
  /** Delay between frames; GIF stores centiseconds, so its delays are multiples of 10 ms. */
  delayMs: number
  durationMs: number
}

/** Frame count and timing of an animation of `seconds` at `fps` (at least two frames). */
export function videoTiming(fps: number, seconds: number, format: AnimationFormat): VideoTiming {
  const frames = Math.max(2, Math.round(seconds * fps))
  const exact = 1000 / fps
  const delayMs = format === 'gif' ? Math.max(10, Math.round(exact / 10) * 10) : Math.round(exact)
  return { frames, delayMs, durationMs: frames * delayMs }
}

const num = (value: unknown, fallback: number): number =>
  typeof value === 'number' && Number.isFinite(value) ? value : fallback

/**
 * What a run of this (validated, defaulted) input will measure, predicted from the input alone:
 * output megapixels from `width`/`height`/`num_images`, output seconds from `fps`/`duration_seconds`.
 * Metrics that depend on an input image are not predicted.
 */
export function predictMetrics(input: Record<string, unknown>): ModelMetrics {
  const metrics: ModelMetrics = {}
  if (typeof input.width === 'number' && typeof input.height === 'number') {
    const frames =
      typeof input.fps === 'number' ? 1 : Math.max(1, Math.round(num(input.num_images, 1)))
    metrics.megapixels = (input.width * input.height * frames) / 1e6
  }
  if (typeof input.fps === 'number' && typeof input.duration_seconds === 'number') {
    const format = input.format === 'gif' ? 'gif' : 'webp'
    metrics.seconds = videoTiming(input.fps, input.duration_seconds, format).durationMs / 1000
  }
  return metrics
}
