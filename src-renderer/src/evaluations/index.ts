export { EvaluationsSection } from './EvaluationsSection'
