// What `import … from 'electron'` gives the built main bundle in the stand-in's child process
// (hooks.mjs maps the specifier here): Electron's names only, so a name the shell imports that
// the stand-in lacks fails to link, as a name Electron lacks would. The test's controls stay in
// runtime.mjs.
import { app, BrowserWindow, dialog, ipcMain, session, shell } from './runtime.mjs'

export { app, BrowserWindow, dialog, ipcMain, session, shell }

export default { app, BrowserWindow, dialog, ipcMain, session, shell }
