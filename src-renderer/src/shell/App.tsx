import { useEffect } from 'react'
import { useShallow } from 'zustand/react/shallow'
import { useAppStore } from '../store'
import { CommandPalette } from './CommandPalette'
import { FileDrop } from './FileDrop'
import { LazyBoundary, Pending } from './lazy'
import { SECTION_SCREENS } from './sectionScreens'
import { SECTION_COPY } from './sections'
import { ShortcutsHelp } from './ShortcutsHelp'
import { Sidebar } from './Sidebar'
import { Toasts } from './Toasts'
import { useShellKeys } from './useShellKeys'

function SectionPage() {
  const section = useAppStore((s) => s.section)
  const Page = SECTION_SCREENS[section].Component
  // Keyed by section: a chunk that failed to load is tried again when the section is shown again.
  return (
    <LazyBoundary key={section} fallback={<Pending />}>
      <Page />
    </LazyBoundary>
  )
}

export function App() {
  const {
    section,
    theme,
    loadAppInfo,
    connectBackground,
    connectionProblem,
    notices,
    dismissNotice,
  } = useAppStore(
    useShallow((s) => ({
      section: s.section,
      theme: s.theme,
      connectBackground: s.connectBackground,
      loadAppInfo: s.loadAppInfo,
      connectionProblem: s.connectionProblem,
      notices: s.notices,
      dismissNotice: s.dismissNotice,
    })),
  )

  useEffect(() => {
    void loadAppInfo()
  }, [loadAppInfo])

  useEffect(() => {
    document.documentElement.dataset.theme = theme
  }, [theme])

  useEffect(() => connectBackground(), [connectBackground])

  // Ctrl/Cmd+1…5, Ctrl/Cmd+K, ? and Ctrl/Cmd+/, from the shortcuts table the help sheet lists.
  useShellKeys()

  const copy = SECTION_COPY[section]
  return (
    <div className="app">
      <Sidebar />
      <main className="content" aria-labelledby="section-title">
        {connectionProblem ? (
          <div className="banner error" role="alert">
            {connectionProblem}
          </div>
        ) : null}
        {/* Info notices pass by as toasts; warnings and errors stay until dismissed. */}
        {notices.map((notice, index) =>
          notice.level === 'info' ? null : (
            <div
              key={`${index}-${notice.message}`}
              className={`banner ${notice.level}`}
              role="alert"
            >
              <span>{notice.message}</span>
              <button
                type="button"
                className="link-button"
                onClick={() => {
                  dismissNotice(index)
                }}
              >
                Dismiss
              </button>
            </div>
          ),
        )}
        <header className="section-header">
          <h1 id="section-title">{copy.title}</h1>
          <p className="muted">{copy.summary}</p>
        </header>
        <SectionPage />
      </main>
      <Toasts />
      <CommandPalette />
      <ShortcutsHelp />
      <FileDrop />
    </div>
  )
}
