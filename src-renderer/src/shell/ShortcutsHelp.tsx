import { Fragment } from 'react'
import { useAppStore } from '../store'
import { Modal } from './Modal'
import { comboKeys, isMac, SHORTCUTS, type Shortcut, type ShortcutGroup } from './shortcuts'

const GROUPS: ShortcutGroup[] = ['Anywhere', 'Flow editor', 'Command palette']

function Keys({ shortcut, mac }: { shortcut: Shortcut; mac: boolean }) {
  return (
    <>
      {shortcut.keys.map((combo, index) => (
        <Fragment key={index}>
          {index > 0 ? <span className="muted"> or </span> : null}
          <span className="combo">
            {comboKeys(combo, mac).map((key) => (
              <kbd key={key}>{key}</kbd>
            ))}
          </span>
        </Fragment>
      ))}
    </>
  )
}

/** Every shortcut of the app, read from the table the key handlers use. */
export function ShortcutsHelp() {
  const open = useAppStore((s) => s.overlay === 'shortcuts')
  const closeOverlay = useAppStore((s) => s.closeOverlay)
  if (!open) return null
  const mac = isMac()
  return (
    <Modal label="Keyboard shortcuts" className="help-sheet" onClose={closeOverlay}>
      <header className="help-sheet-head">
        <h2>Keyboard shortcuts</h2>
        <button type="button" className="small-button" onClick={closeOverlay}>
          Close
        </button>
      </header>
      <div className="help-sheet-groups">
        {GROUPS.map((group) => (
          <section key={group} aria-label={group}>
            <h3>{group}</h3>
            <table>
              <tbody>
                {(SHORTCUTS as readonly Shortcut[])
                  .filter((shortcut) => shortcut.group === group)
                  .map((shortcut) => (
                    <tr key={shortcut.id} data-shortcut={shortcut.id}>
                      <td>{shortcut.label}</td>
                      <td className="help-keys">
                        <Keys shortcut={shortcut} mac={mac} />
                      </td>
                    </tr>
                  ))}
              </tbody>
            </table>
          </section>
        ))}
      </div>
    </Modal>
  )
}
