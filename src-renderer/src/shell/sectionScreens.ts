import type { ComponentType } from 'react'
import { FlowsPage } from '../flows/FlowsPage'
import type { Section } from '../store'
import { lazyScreen, type LazyScreen } from './lazy'

/**
 * One page per section; a section added to SECTIONS fails to compile until it has one. Flows is
 * the start screen and comes with the app; every other section is a chunk of its own, fetched
 * the first time it is shown or when the pointer or the focus comes to its sidebar item.
 * Each is imported from its own module, not its folder's index, so that nothing the start
 * screen imports pulls it in.
 */
export const SECTION_SCREENS: Record<Section, LazyScreen> = {
  flows: eager(FlowsPage),
  assets: lazyScreen(() => import('../assets/AssetsPage').then((module) => module.AssetsPage)),
  runs: lazyScreen(() => import('../runs/list/RunsSection').then((module) => module.RunsSection)),
  evaluations: lazyScreen(() =>
    import('../evaluations/EvaluationsSection').then((module) => module.EvaluationsSection),
  ),
  batches: lazyScreen(() =>
    import('../batches/BatchesSection').then((module) => module.BatchesSection),
  ),
  settings: lazyScreen(() => import('./SettingsPage').then((module) => module.SettingsPage)),
}

function eager(Component: ComponentType): LazyScreen {
  return { Component, preload: () => undefined }
}
