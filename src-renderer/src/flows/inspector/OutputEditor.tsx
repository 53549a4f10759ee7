import { useShallow } from 'zustand/react/shallow'
import { typeConnection } from '../../../../src-shared/domain/flow'
import { useAppStore } from '../../store'
import {
  mapOutputToFlowOutput,
  portMapping,
  type CanvasNode,
  type FileNodeOutput,
} from '../document'
import { TypeChip } from './TypeChip'

export function OutputEditor({ node, output }: { node: CanvasNode; output: FileNodeOutput }) {
  const { flowOutputs, readOnly, editDoc } = useAppStore(
    useShallow((s) => ({
      flowOutputs: s.doc?.flow.outputs,
      readOnly: s.editor?.readOnly ?? true,
      editDoc: s.editDoc,
    })),
  )
  const mapped = portMapping(node.data.record, 'flow_outputs')[output.name] ?? ''
  const compatible = (flowOutputs ?? []).filter(
    (candidate) =>
      typeConnection(output.variable_type_code, candidate.variable_type_code) !== 'none' ||
      candidate.name === mapped,
  )
  return (
    <div className="inspector-output" data-testid={`output-${output.name}`}>
      <div className="inspector-input-head">
        <span className="inspector-input-label">{output.display_name ?? output.name}</span>
        <TypeChip type={output.variable_type_code} />
      </div>
      {compatible.length > 0 ? (
        <select
          aria-label={`Flow output filled by ${output.name}`}
          value={mapped}
          disabled={readOnly}
          onChange={(event) => {
            const name = event.target.value === '' ? null : event.target.value
            editDoc((current) => mapOutputToFlowOutput(current, node.id, output.name, name))
          }}
        >
          <option value="">Fills no flow output</option>
          {compatible.map((flowOutput) => (
            <option key={flowOutput.id} value={flowOutput.name}>
              Fills the flow output “{flowOutput.display_name ?? flowOutput.name}”
            </option>
          ))}
        </select>
      ) : null}
    </div>
  )
}
