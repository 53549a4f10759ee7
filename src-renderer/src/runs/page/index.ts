export { RunPage, type RunPageProps } from './RunPage'
export { RunCompare, type RunCompareProps } from './RunCompare'
