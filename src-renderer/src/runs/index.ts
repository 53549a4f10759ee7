/**
 * The Runs section: the list of every synced run (`list/`), and the run page opened from it
 * (`page/`, its own module). App.tsx shows `RunsSection` for `section === 'runs'`.
 */
export { RunsSection } from './list'
