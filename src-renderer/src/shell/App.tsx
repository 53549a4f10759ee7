import { useEffect } from 'react'
import { useShallow } from 'zustand/react/shallow'
import { FlowsPage } from '../flows'
import { SECTIONS, useAppStore } from '../store'
import { SECTION_COPY } from './sections'
import { SettingsPage } from './SettingsPage'
import { Sidebar } from './Sidebar'

function EmptyState({ title, hint }: { title: string; hint: string }) {
  return (
    <div className="empty-state" role="status">
      <h2>{title}</h2>
      <p>{hint}</p>
    </div>
  )
}

export function App() {
  const { section, goTo, theme, loadAppInfo, connectionProblem, notices, dismissNotice } =
    useAppStore(
      useShallow((s) => ({
        section: s.section,
        goTo: s.goTo,
        theme: s.theme,
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

  // Ctrl/Cmd+1…5 jumps between sections, as the sidebar's hints say.
  useEffect(() => {
    const onKey = (event: KeyboardEvent) => {
      if (!(event.ctrlKey || event.metaKey) || event.altKey || event.shiftKey) return
      const target = SECTIONS[Number(event.key) - 1]
      if (target) {
        event.preventDefault()
        goTo(target)
      }
    }
    window.addEventListener('keydown', onKey)
    return () => {
      window.removeEventListener('keydown', onKey)
    }
  }, [goTo])

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
        {notices.map((notice, index) => (
          <div key={`${index}-${notice.message}`} className={`banner ${notice.level}`} role="alert">
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
        ))}
        <header className="section-header">
          <h1 id="section-title">{copy.title}</h1>
          <p className="muted">{copy.summary}</p>
        </header>
        {section === 'settings' ? (
          <SettingsPage />
        ) : section === 'flows' ? (
          <FlowsPage />
        ) : (
          <EmptyState title={copy.emptyTitle} hint={copy.emptyHint} />
        )}
      </main>
    </div>
  )
}
