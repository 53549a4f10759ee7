import { useEffect, useState } from 'react'
import { useShallow } from 'zustand/react/shallow'
import { useAppStore } from '../../store'
import { innerRuns, type CanvasNode } from '../document'
import { NODE_STATE_WORDS } from '../words'

/** A sub-flow's own nodes, as they do in the run: loaded from the sub-flow for their labels. */
export function SubFlowStates({ node }: { node: CanvasNode }) {
  const inner = useAppStore(useShallow((s) => Object.fromEntries(innerRuns(s.nodeRuns, node.id))))
  const subFlowId = node.data.record.sub_flow_id ?? null
  const [loaded, setLoaded] = useState<{ id: string; labels: Map<string, string> } | null>(null)
  useEffect(() => {
    const api = window.atelier
    if (!api || subFlowId === null) return
    let current = true
    void api.flows.get({ id: subFlowId }).then((result) => {
      if (!current || !result.ok) return
      const nodes = Array.isArray(result.value.flow.nodes) ? result.value.flow.nodes : []
      const labels = new Map<string, string>()
      for (const item of nodes as { id?: unknown; label?: unknown }[]) {
        if (typeof item.id === 'string') {
          labels.set(item.id, typeof item.label === 'string' ? item.label : item.id)
        }
      }
      setLoaded({ id: subFlowId, labels })
    })
    return () => {
      current = false
    }
  }, [subFlowId])
  const labels = loaded?.id === subFlowId ? loaded.labels : new Map<string, string>()
  // The sub-flow's nodes in its own order, then any the run told of that it does not list.
  const ids = [...labels.keys(), ...Object.keys(inner).filter((id) => !labels.has(id))]
  if (ids.length === 0) return null
  return (
    <div className="sub-flow-states" data-testid="sub-flow-states">
      <h3>Inside the sub-flow</h3>
      <ul>
        {ids.map((id) => {
          const run = inner[id]
          return (
            <li key={id} data-testid={`inner-${labels.get(id) ?? id}`}>
              <span className="sub-flow-node">{labels.get(id) ?? id}</span>
              {run ? (
                <span className={`state-badge ${run.state}`} data-state={run.state}>
                  {NODE_STATE_WORDS[run.state]}
                </span>
              ) : (
                <span className="muted">Not reached</span>
              )}
              {run?.error ? <p className="field-problem">{run.error.message}</p> : null}
            </li>
          )
        })}
      </ul>
    </div>
  )
}
