import { PROVENANCE_KEYWORD } from '../../src-shared/domain/provenance'

/**
 * The XMP packet that carries the record in WebP and JPEG: one property in a namespace of ours
 * (`atelier:provenance`, the same name as the PNG keyword) holding the record's JSON. Written
 * and read by hand: the packet's shape is fixed by us, and an XML library is not a dependency.
 */
export const ATELIER_XMP_NAMESPACE = 'https://atelier.invalid/ns/provenance/1.0/'
const [PREFIX, PROPERTY] = PROVENANCE_KEYWORD.split(':') as [string, string]

/** Quotes are escaped in attributes only: the record's JSON is full of them. */
function escapeXml(text: string, inAttribute = false): string {
  const escaped = text.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;')
  return inAttribute ? escaped.replaceAll('"', '&quot;') : escaped
}

function unescapeXml(text: string): string {
  return text.replace(/&(#x[0-9a-f]+|#[0-9]+|amp|lt|gt|quot|apos);/gi, (_, entity: string) => {
    const name = entity.toLowerCase()
    if (name.startsWith('#x')) return String.fromCodePoint(parseInt(name.slice(2), 16))
    if (name.startsWith('#')) return String.fromCodePoint(parseInt(name.slice(1), 10))
    return { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" }[name] ?? ''
  })
}

/**
 * A whole XMP packet with the record in it. `notes` become attributes of ours beside the
 * property: what the container needs to undo the embedding exactly (see webp.ts).
 */
export function buildXmpPacket(json: string, notes: Record<string, string> = {}): string {
  const attributes = Object.entries(notes)
    .map(([name, value]) => `\n    ${PREFIX}:${name}="${escapeXml(value, true)}"`)
    .join('')
  return (
    '<?xpacket begin="\uFEFF" id="W5M0MpCehiHzreSzNTczkc9d"?>\n' +
    '<x:xmpmeta xmlns:x="adobe:ns:meta/">\n' +
    ' <rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#">\n' +
    `  <rdf:Description rdf:about=""\n    xmlns:${PREFIX}="${ATELIER_XMP_NAMESPACE}"${attributes}>\n` +
    `   <${PREFIX}:${PROPERTY}>${escapeXml(json)}</${PREFIX}:${PROPERTY}>\n` +
    '  </rdf:Description>\n' +
    ' </rdf:RDF>\n' +
    '</x:xmpmeta>\n' +
    '<?xpacket end="w"?>'
  )
}

/** Whether an XMP packet is ours: it declares our namespace. */
export function isAtelierXmp(packet: string): boolean {
  return packet.includes(ATELIER_XMP_NAMESPACE)
}

/**
 * The record's JSON text from a packet of ours, as an element (how we write it) or as an
 * attribute (how some XMP editors rewrite simple properties); null when it cannot be found.
 */
export function recordTextOf(packet: string): string | null {
  const element = new RegExp(`<${PREFIX}:${PROPERTY}>([^<]*)</${PREFIX}:${PROPERTY}>`).exec(packet)
  if (element) return unescapeXml(element[1] ?? '')
  const attribute = new RegExp(`\\s${PREFIX}:${PROPERTY}="([^"]*)"`).exec(packet)
  return attribute ? unescapeXml(attribute[1] ?? '') : null
}

/** One of our notes (an attribute beside the property), or null. */
export function noteOf(packet: string, name: string): string | null {
  const match = new RegExp(`\\s${PREFIX}:${name}="([^"]*)"`).exec(packet)
  return match ? unescapeXml(match[1] ?? '') : null
}
