import type { Section } from '../store'

export interface SectionCopy {
  title: string
  /** One line under the title: what the section is for, in the user's words. */
  summary: string
  emptyTitle: string
  emptyHint: string
}

export const SECTION_COPY: Record<Section, SectionCopy> = {
  flows: {
    title: 'Flows',
    summary: 'Build graphs of models and tools, run them, and re-run only what changed.',
    emptyTitle: 'No flows yet',
    emptyHint: 'Flows you create, import or sync from the service will be listed here.',
  },
  assets: {
    title: 'Assets',
    summary: 'Images and videos to use as inputs, organised in folders.',
    emptyTitle: 'No assets yet',
    emptyHint: 'Upload a folder of images or videos and it will appear here, folders and all.',
  },
  runs: {
    title: 'Runs',
    summary: 'Every run with its logs, node runs, outputs, cost and callback deliveries.',
    emptyTitle: 'No runs yet',
    emptyHint: 'Runs you start and runs synced from the service are kept here, even offline.',
  },
  evaluations: {
    title: 'Evaluations',
    summary: 'Quality verdicts, scores and judges for generated images.',
    emptyTitle: 'No evaluations yet',
    emptyHint: 'Submit an image for evaluation, or sync the ones made on the service.',
  },
  batches: {
    title: 'Batches',
    summary: 'One model run on many inputs at once: how each batch went, item by item.',
    emptyTitle: 'No batches yet',
    emptyHint: 'Batches made on the service are kept here once synced, even offline.',
  },
  settings: {
    title: 'Settings',
    summary: 'Profiles, appearance and where Atelier keeps its data.',
    emptyTitle: '',
    emptyHint: '',
  },
}
