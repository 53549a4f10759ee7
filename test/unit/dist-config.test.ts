import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
// @ts-expect-error: a plain .mjs script of the build, with no types of its own.
import { builderConfig } from '../../scripts/dist/config.mjs'

/**
 * `npm run dist` cannot run here (Electron's runtime and headers cannot be downloaded), so its
 * configuration is checked as data: what issue 9 asks of the installers must be in it.
 */
const root = join(import.meta.dirname, '..', '..')
const config = (builderConfig as (stage: string) => Record<string, unknown>)('/tmp/stage')

describe('the installers configuration', () => {
  it('packs the staged copy into AppImage, deb, dmg and nsis, with the app icon', () => {
    expect(config.directories).toMatchObject({ app: '/tmp/stage' })
    expect(config.linux).toMatchObject({ target: ['AppImage', 'deb'] })
    expect(config.mac).toMatchObject({ target: ['dmg'] })
    expect(config.win).toMatchObject({ target: ['nsis'] })
    expect(config.icon).toBe(join(root, 'resources', 'icon.png'))
    expect(existsSync(config.icon as string)).toBe(true)
  })

  it('rebuilds the native modules for Electron, unpacked from the archive', () => {
    expect(config.npmRebuild).toBe(true)
    expect(config.asar).toBe(true)
    expect(config.asarUnpack).toContain('**/*.node')
    // The sandbox reads the contract at run time.
    expect(config.files).toEqual(expect.arrayContaining(['out/**/*', 'resources/openapi.yaml']))
  })

  it('sets the fuses: no RunAsNode, NODE_OPTIONS or inspect; asar only, with integrity', () => {
    expect(config.electronFuses).toEqual({
      runAsNode: false,
      enableCookieEncryption: true,
      enableNodeOptionsEnvironmentVariable: false,
      enableNodeCliInspectArguments: false,
      enableEmbeddedAsarIntegrityValidation: true,
      onlyLoadAppFromAsar: true,
    })
  })
})
