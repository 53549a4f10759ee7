import { useState } from 'react'
import type { NodeRun, RunLog } from '../../../../src-shared/api'
import { findMedia } from './media'
import { MediaStrip } from './Outputs'
import { costWords, durationWords, spanMs, statusWords, valueWords } from './words'

function nodeName(node: NodeRun, index: number): string {
  return node.wfengine_node_id ?? node.flow_node_id?.slice(0, 8) ?? `Step ${index + 1}`
}

/** The nodes of a flow or workflow run (a model run has one): click one for its log and outputs. */
export function NodeRuns({ nodes, logs }: { nodes: NodeRun[]; logs: RunLog[] }) {
  const [openId, setOpenId] = useState<string | null>(null)
  if (nodes.length === 0) return null
  return (
    <section className="card run-card" aria-labelledby="run-nodes-title">
      <div className="card-head">
        <h2 id="run-nodes-title">Node runs</h2>
        <span className="muted">{nodes.length}</span>
      </div>
      <ul className="run-nodes">
        {nodes.map((node, index) => {
          const open = openId === node.id
          const own = logs.filter((line) => line.node_run_id === node.id)
          const media = open ? findMedia(node.output) : []
          return (
            <li key={node.id} className={open ? 'open' : ''}>
              <button
                type="button"
                className="run-node-row"
                aria-expanded={open}
                onClick={() => {
                  setOpenId(open ? null : node.id)
                }}
              >
                <span className={`run-chip small ${node.status_code}`}>
                  {statusWords(node.status_code)}
                </span>
                <span className="run-node-name">{nodeName(node, index)}</span>
                <span className="muted">
                  {durationWords(spanMs(node.started_at, node.completed_at))}
                </span>
                <span className="muted">{costWords(node.cost)}</span>
              </button>
              {open ? (
                <div className="run-node-detail">
                  {node.failure_code ? (
                    <p className="run-node-failure">
                      {node.failure_code}: {node.failure_message}
                    </p>
                  ) : null}
                  {media.length > 0 ? (
                    <MediaStrip media={media} label="Node outputs" size={128} />
                  ) : null}
                  {own.length > 0 ? (
                    <pre className="run-node-log">
                      {own.map((line) => `${line.level_code.padEnd(8)}${line.message}`).join('\n')}
                    </pre>
                  ) : (
                    <p className="muted">No log lines of its own.</p>
                  )}
                  {media.length === 0 && node.output ? (
                    <pre className="run-node-log">{valueWords(node.output)}</pre>
                  ) : null}
                </div>
              ) : null}
            </li>
          )
        })}
      </ul>
    </section>
  )
}
