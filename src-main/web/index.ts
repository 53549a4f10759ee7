/**
 * The browser mode (`atelier web`): the desktop app with a browser tab for a window. One entry
 * point, `startWebServer({ home, port })`.
 *
 * Decisions, and why:
 *
 * - The same main-process services as the Electron main (`src-main/index.ts`): the backend (the
 *   profile's service, else the local sandbox in `<home>/sandbox`), `openCore` with no after-sync
 *   steps, and `createHandlers`; local data that cannot open becomes the same `Unavailable`.
 * - The renderer is built with Vite into `<home>/cache/web-renderer/<digest>`, the digest taken
 *   over `src-renderer`, `src-shared` and the lockfile, so a build (a few seconds) happens only
 *   when one of them changed; older builds are removed. The mode runs from the sources (the
 *   `atelier` binary goes through tsx), so Vite is there.
 * - Served on 127.0.0.1 only. The printed link carries a 256-bit token; the first request with
 *   it gets an HttpOnly, SameSite=Strict session cookie and a redirect to `/`, so the token leaves
 *   the address bar. Every other request and the WebSocket need the cookie and this server's
 *   `Host` (against DNS rebinding); the WebSocket also needs this server's `Origin`. Secrets are
 *   compared in constant time. Without them: 403 and a plain message.
 * - Every answer carries the desktop window's CSP, nosniff, no framing and no Referer; index.html
 *   is never cached; no path can leave the build folder.
 * - The bridge (`bridge.ts`) is one WebSocket at `/bridge` per page: calls go through
 *   `dispatchIpc` with `shell: 'web'`, events go to every page, notices are told again to a page
 *   that connects. The page side (`src-renderer/src/web-bridge.ts`) installs `window.atelier` only
 *   when the served index.html carries the bridge marker this server adds, so the desktop build
 *   and a page opened on its own are unchanged.
 */
export { startWebServer } from './server'
export type { WebServer, WebServerOptions } from './server'
export { BRIDGE_MAX_MESSAGE_BYTES, BRIDGE_PATH } from './bridge'
export { RENDERER_CACHE_DIR } from './renderer-build'
