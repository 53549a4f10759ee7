// The Flows section: the flow list and the flow editor (canvas, palette, inspector, runs).
export { FlowsPage } from './FlowsPage'
