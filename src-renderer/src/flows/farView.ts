import { createContext } from 'react'

/**
 * Below this zoom a node's small text cannot be read (13 px is under 5 px on screen), so the
 * canvas draws each node as a plain labelled box (`far` in flows.css): the same box with its
 * ports in place, so edges stay attached and nothing is measured again when the zoom crosses it.
 */
export const FAR_ZOOM = 0.4

/** Whether the canvas is zoomed out past reading; the canvas provides it, its nodes read it. */
export const FarViewContext = createContext(false)
