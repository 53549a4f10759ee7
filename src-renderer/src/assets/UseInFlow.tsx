import { useState } from 'react'
import { useShallow } from 'zustand/react/shallow'
import { Modal } from '../shell/Modal'
import { useAppStore } from '../store'

/** A new flow's name: the asset's, without its extension. */
function flowName(assetName: string): string {
  const dot = assetName.lastIndexOf('.')
  const base = dot > 0 ? assetName.slice(0, dot) : assetName
  return `Flow with ${base}`.slice(0, 200)
}

/**
 * "Use in a flow": the Flows editor with an Image node holding this asset. With a flow open for
 * editing, the person chooses between that flow and a new one; otherwise a new flow is made.
 */
export function UseInFlow({ assetId, assetName }: { assetId: string; assetName: string }) {
  const { openName, goTo, createFlow, openFlow, addAssetNode, pushToast } = useAppStore(
    useShallow((s) => ({
      openName: s.editor && !s.editor.readOnly ? s.editor.name : null,
      goTo: s.goTo,
      createFlow: s.createFlow,
      openFlow: s.openFlow,
      addAssetNode: s.addAssetNode,
      pushToast: s.pushToast,
    })),
  )
  const [asking, setAsking] = useState(false)
  const [busy, setBusy] = useState(false)

  const use = async (where: 'open' | 'new') => {
    setAsking(false)
    setBusy(true)
    try {
      if (where === 'new') {
        const made = await createFlow(flowName(assetName))
        if (!made || !(await openFlow(made.id))) {
          pushToast({
            tone: 'error',
            title: 'No flow was made',
            message: 'Open Flows to see why, then try again.',
          })
          return
        }
      }
      goTo('flows')
      if (!(await addAssetNode({ id: assetId, name: assetName }))) {
        pushToast({
          tone: 'error',
          title: `"${assetName}" was not added`,
          message: 'The Image node is not available: open Flows and check the palette.',
        })
      }
    } finally {
      setBusy(false)
    }
  }

  return (
    <>
      <button
        type="button"
        className="small-button"
        disabled={busy}
        onClick={() => {
          if (openName === null) void use('new')
          else setAsking(true)
        }}
      >
        Use in a flow
      </button>
      {asking ? (
        <Modal
          label="Use in a flow"
          className="dialog use-in-flow-dialog"
          onClose={() => {
            setAsking(false)
          }}
        >
          <h2>Use “{assetName}” in a flow</h2>
          <p>The flow “{openName}” is open in the editor.</p>
          <div className="use-in-flow-actions">
            <button
              type="button"
              className="small-button primary"
              onClick={() => {
                void use('open')
              }}
            >
              Add to the open flow
            </button>
            <button
              type="button"
              className="small-button"
              onClick={() => {
                void use('new')
              }}
            >
              New flow
            </button>
          </div>
        </Modal>
      ) : null}
    </>
  )
}
