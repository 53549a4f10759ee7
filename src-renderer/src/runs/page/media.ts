/** A picture or video a run took or made, as its records carry it. */
export interface RunMedia {
  /** Where it sits in the record: "images[0]", "image". */
  path: string
  sha256: string
  url: string | null
  contentType: string | null
  width: number | null
  height: number | null
}

const SHA256 = /^[0-9a-f]{64}$/i

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

/**
 * Every file reference in an input or output (an object with a sha256), at most `limit`, depth
 * first: the normalized output has `{images: [{url, content_type, width, height, sha256}]}`
 * and flows name theirs freely, so the shape is found rather than assumed.
 */
export function findMedia(value: unknown, limit = 24, path = ''): RunMedia[] {
  const found: RunMedia[] = []
  const walk = (node: unknown, at: string, depth: number) => {
    if (found.length >= limit || depth > 6) return
    if (Array.isArray(node)) {
      node.forEach((item, index) => {
        walk(item, `${at}[${index}]`, depth + 1)
      })
      return
    }
    if (!isRecord(node)) return
    const sha = node.sha256
    if (typeof sha === 'string' && SHA256.test(sha)) {
      found.push({
        path: at,
        sha256: sha.toLowerCase(),
        url: typeof node.url === 'string' ? node.url : null,
        contentType: typeof node.content_type === 'string' ? node.content_type : null,
        width: typeof node.width === 'number' ? node.width : null,
        height: typeof node.height === 'number' ? node.height : null,
      })
      return
    }
    for (const [key, child] of Object.entries(node))
      walk(child, at ? `${at}.${key}` : key, depth + 1)
  }
  walk(value, path, 0)
  return found
}

export const isVideo = (media: RunMedia) => media.contentType?.startsWith('video/') ?? false
