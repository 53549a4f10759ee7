/** A rectangle on the screen, as playwright's boundingBox gives it. */
export interface Box {
  x: number
  y: number
  width: number
  height: number
}

/** Whether two rectangles share any area (touching edges do not count). */
export const overlap = (a: Box, b: Box) =>
  a.x < b.x + b.width && b.x < a.x + a.width && a.y < b.y + b.height && b.y < a.y + a.height

/** Whether one rectangle lies within another, give or take a pixel of rounding. */
export const inside = (inner: Box, outer: Box) =>
  inner.x >= outer.x - 1 &&
  inner.y >= outer.y - 1 &&
  inner.x + inner.width <= outer.x + outer.width + 1 &&
  inner.y + inner.height <= outer.y + outer.height + 1
