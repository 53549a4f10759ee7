import type { FlowProblem } from '../../../../src-shared/domain/flow'

export function ProblemList({ problems }: { problems: readonly FlowProblem[] | undefined }) {
  if (!problems || problems.length === 0) return null
  return (
    <ul className="problem-list">
      {problems.map((problem, index) => (
        <li key={`${problem.code}-${problem.path}-${index}`} data-testid="problem-marker">
          {problem.message}
        </li>
      ))}
    </ul>
  )
}
