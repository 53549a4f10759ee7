// electron-builder's configuration for `npm run dist` (scripts/dist.mjs), as a function of the
// staged copy of the app it packs. Kept apart so that a test can read it without building.
import { join } from 'node:path'

const root = join(import.meta.dirname, '..', '..')

/**
 * - The app packed is the staged copy (`dist/.stage/app`: the built `out/`, package.json, the
 *   contract the sandbox reads, and the production dependencies from the lockfile), so the
 *   project's own node_modules (built for Node, which the tests run on) are never touched.
 * - better-sqlite3 is rebuilt for Electron's ABI in that copy (`npmRebuild`); native modules
 *   are unpacked from the asar archive, since a `.node` file cannot be loaded from inside it.
 * - Electron's fuses are set after packing: no running as plain Node, no NODE_OPTIONS, no
 *   inspect arguments, the app only from its asar archive with its integrity checked, cookies
 *   encrypted.
 */
export function builderConfig(stage) {
  return {
    appId: 'app.atelier.studio',
    productName: 'Atelier',
    copyright: 'Copyright © 2026 The Atelier authors',
    directories: {
      app: stage,
      output: join(root, 'dist'),
      buildResources: join(root, 'resources'),
    },
    files: ['out/**/*', 'resources/openapi.yaml', 'package.json', 'node_modules/**/*'],
    asar: true,
    asarUnpack: ['**/*.node'],
    npmRebuild: true,
    icon: join(root, 'resources', 'icon.png'),
    electronFuses: {
      runAsNode: false,
      enableCookieEncryption: true,
      enableNodeOptionsEnvironmentVariable: false,
      enableNodeCliInspectArguments: false,
      enableEmbeddedAsarIntegrityValidation: true,
      onlyLoadAppFromAsar: true,
    },
    linux: {
      target: ['AppImage', 'deb'],
      category: 'Graphics',
      synopsis: 'A local-first studio for AI images and videos',
      maintainer: 'The Atelier authors <hello@atelier.invalid>',
    },
    deb: { depends: ['libsecret-1-0'] },
    mac: { target: ['dmg'], category: 'public.app-category.graphics-design' },
    win: { target: ['nsis'] },
    nsis: { oneClick: false, allowToChangeInstallationDirectory: true },
  }
}
