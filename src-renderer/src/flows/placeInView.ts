import { useStoreApi, type XYPosition } from '@xyflow/react'
import { useCallback } from 'react'
import { useAppStore } from '../store'
import { spotInView } from './document'

/**
 * Where a node added by a click (not dropped at a point) goes: a free spot in the part of the
 * canvas in view, which is what the person is looking at. Undefined before the canvas has a size.
 */
export function usePlaceInView(): () => XYPosition | undefined {
  const canvas = useStoreApi()
  return useCallback(() => {
    const { transform, width, height } = canvas.getState()
    const [x, y, zoom] = transform
    if (width === 0 || height === 0 || zoom === 0) return undefined
    const { doc, measured } = useAppStore.getState()
    return spotInView(doc?.nodes ?? [], measured, {
      x: -x / zoom,
      y: -y / zoom,
      width: width / zoom,
      height: height / zoom,
    })
  }, [canvas])
}
