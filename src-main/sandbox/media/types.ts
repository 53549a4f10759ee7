import type { components } from '../../../src-shared/api'

// A leaf both records.ts and inspect.ts take the media type from: records keep an inspection and
// an inspection names a media type, so the name cannot live in either without a type circle.
export type MediaType = components['schemas']['MediaType']
