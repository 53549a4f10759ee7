// First: in the browser mode it installs `window.atelier` before the app can read it.
import './web-bridge'
// Before the app's modules, so that this list sets the order of the rules (see there).
import './stylesheets'
import { StrictMode } from 'react'
import { createRoot } from 'react-dom/client'
import { App } from './shell/App'

const root = document.getElementById('root')
if (!root) throw new Error('The page has no #root element.')
createRoot(root).render(
  <StrictMode>
    <App />
  </StrictMode>,
)
