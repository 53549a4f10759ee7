// A Vite/Rollup plugin that stores the service contract as JSON beside the build: parsing the
// 300 KB YAML took about a second of every sandbox start. The JSON names the sha256 of the YAML
// it was made from, so an edited contract is never read from a stale copy.
import { createHash } from 'node:crypto'
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { parse } from 'yaml'

/** Where the copy lives, relative to the folder that holds `resources/` and `out/`. */
export const CONTRACT_JSON = join('out', 'contract', 'openapi.json')

export function contractJson({ root }) {
  return {
    name: 'atelier-contract-json',
    writeBundle() {
      const text = readFileSync(join(root, 'resources', 'openapi.yaml'))
      const sha256 = createHash('sha256').update(text).digest('hex')
      const file = join(root, CONTRACT_JSON)
      mkdirSync(join(file, '..'), { recursive: true })
      writeFileSync(file, JSON.stringify({ sha256, document: parse(text.toString('utf8')) }))
    },
  }
}
