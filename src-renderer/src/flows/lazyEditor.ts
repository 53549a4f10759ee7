import { lazyScreen } from '../shell/lazy'

/**
 * The flow editor (the canvas and its graph library, the palette, the inspector, the auto
 * layout) in a chunk of its own: the start screen, the flow list, loads without it. It is
 * fetched when the browser is idle, when the pointer or the focus comes to a flow, and as soon
 * as a flow starts opening, so that it is usually there before the flow is.
 */
export const editorScreen = lazyScreen(() => import('./Editor').then((module) => module.Editor))
