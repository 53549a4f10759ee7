import { BaseEdge, type EdgeProps } from '@xyflow/react'
import { memo } from 'react'
import type { CanvasEdge } from './document'

/** How far a retry edge bows out of its ports, and how far below them it runs back. */
const REACH = 120
const DROP = 140

/**
 * A retry edge runs backwards, from a quality gate's output to an input upstream of it: drawn
 * as React Flow draws an edge it would cross back through both nodes, so it bows out and runs
 * back below them. The label sits at the curve's middle.
 */
export function retryPath(
  sourceX: number,
  sourceY: number,
  targetX: number,
  targetY: number,
): { path: string; labelX: number; labelY: number } {
  const drop = DROP + Math.abs(targetY - sourceY) / 2
  return {
    path: `M${String(sourceX)},${String(sourceY)} C${String(sourceX + REACH)},${String(sourceY + drop)} ${String(targetX - REACH)},${String(targetY + drop)} ${String(targetX)},${String(targetY)}`,
    // The cubic bezier at t = 1/2.
    labelX: (sourceX + targetX) / 2,
    labelY: (sourceY + targetY) / 2 + (3 * drop) / 4,
  }
}

export const RetryEdge = memo(function RetryEdge({
  id,
  sourceX,
  sourceY,
  targetX,
  targetY,
  label,
  markerEnd,
  style,
  interactionWidth,
}: EdgeProps<CanvasEdge>) {
  const { path, labelX, labelY } = retryPath(sourceX, sourceY, targetX, targetY)
  return (
    <BaseEdge
      id={id}
      path={path}
      label={label}
      labelX={labelX}
      labelY={labelY}
      markerEnd={markerEnd}
      style={style}
      interactionWidth={interactionWidth}
    />
  )
})
