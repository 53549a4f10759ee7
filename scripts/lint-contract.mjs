// `npm run lint:contract`: the contract (resources/openapi.yaml) through Redocly's strict
// recommended rules (redocly.yaml) and Spectral's OpenAPI ruleset (.spectral.yaml), 0 warnings.
// A script rather than a one-line npm command so that the environment it sets works on Windows
// too. Neither tool may reach the network: Redocly's telemetry is off in redocly.yaml, and its
// update check is off here.
import { spawnSync } from 'node:child_process'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'

const require = createRequire(import.meta.url)
const root = join(import.meta.dirname, '..')
const contract = join(root, 'resources', 'openapi.yaml')

/** The file a package's `bin` names, run with this Node. */
function bin(packageName, command) {
  const manifest = require.resolve(`${packageName}/package.json`)
  const { bin: bins } = require(manifest)
  return join(dirname(manifest), typeof bins === 'string' ? bins : bins[command])
}

const env = { ...process.env, REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' }
for (const args of [
  [bin('@redocly/cli', 'redocly'), 'lint', contract],
  [bin('@stoplight/spectral-cli', 'spectral'), 'lint', '--fail-severity=warn', contract],
]) {
  const { status, error } = spawnSync(process.execPath, args, { cwd: root, env, stdio: 'inherit' })
  if (error) throw error
  if (status !== 0) process.exit(status ?? 1)
}
