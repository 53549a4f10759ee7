export { RunsSection } from './RunsSection'
export { RunsTable, ROW_HEIGHT } from './RunsTable'
export { FilterBar, SEARCH_DEBOUNCE_MS } from './FilterBar'
