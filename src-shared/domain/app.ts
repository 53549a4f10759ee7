/** What the shell shows about the running app. */
export interface AppInfo {
  name: string
  version: string
  /** `electron` in the desktop window, `web` in the browser mode. */
  shell: 'electron' | 'web'
  platform: string
}
