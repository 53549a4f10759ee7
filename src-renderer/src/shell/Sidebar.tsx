import { useShallow } from 'zustand/react/shallow'
import { SectionIcon } from '../components/Icon'
import { SECTIONS, useAppStore } from '../store'
import { AccountArea } from './AccountArea'
import { SECTION_SCREENS } from './sectionScreens'
import { SECTION_COPY } from './sections'
import { sectionShortcutId, shortcutHint } from './shortcuts'
import { SyncStatusArea } from './SyncStatusArea'

export function Sidebar() {
  const { section, goTo, appInfo, openOverlay } = useAppStore(
    useShallow((s) => ({
      section: s.section,
      goTo: s.goTo,
      appInfo: s.appInfo,
      openOverlay: s.openOverlay,
    })),
  )
  return (
    <nav className="sidebar" aria-label="Sections">
      <div className="brand">
        <span className="brand-mark" aria-hidden="true" />
        <span className="brand-name">Atelier</span>
      </div>
      <button
        type="button"
        className="palette-button"
        onClick={() => {
          openOverlay('palette')
        }}
      >
        <span>Search…</span>
        <kbd>{shortcutHint('palette')}</kbd>
      </button>
      <ul>
        {SECTIONS.map((name, index) => (
          <li key={name}>
            <button
              type="button"
              className={name === section ? 'nav-item active' : 'nav-item'}
              aria-current={name === section ? 'page' : undefined}
              title={`${SECTION_COPY[name].title} (${shortcutHint(sectionShortcutId(name))})`}
              onClick={() => {
                goTo(name)
              }}
              onPointerEnter={SECTION_SCREENS[name].preload}
              onFocus={SECTION_SCREENS[name].preload}
            >
              <SectionIcon section={name} />
              <span>{SECTION_COPY[name].title}</span>
              <kbd>{index + 1}</kbd>
            </button>
          </li>
        ))}
      </ul>
      <div className="sidebar-footer">
        <AccountArea />
        <SyncStatusArea />
        {appInfo?.backend ? (
          <div
            className={`backend-badge ${appInfo.backend.kind}`}
            title={
              appInfo.backend.kind === 'sandbox'
                ? `Everything runs on this computer (${appInfo.backend.url}): no account, no cost. Add a profile in Settings to use the real service.`
                : appInfo.backend.url
            }
          >
            <span className="dot" aria-hidden="true" />
            {appInfo.backend.label}
          </div>
        ) : null}
        <div>{appInfo ? `Atelier ${appInfo.version} · ${appInfo.shell}` : 'Atelier'}</div>
      </div>
    </nav>
  )
}
