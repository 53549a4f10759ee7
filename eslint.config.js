// @ts-check
import js from '@eslint/js'
import tseslint from 'typescript-eslint'
import reactHooks from 'eslint-plugin-react-hooks'
import globals from 'globals'
import { createNodeResolver, importX } from 'eslint-plugin-import-x'
import { readdirSync } from 'node:fs'

/**
 * The layers, kept by the linter so that a circle between folders cannot come back (issue 18):
 * - the IPC layer (src-main/ipc) adapts the features to channels and is the only place that
 *   knows them: only the services thread, which serves the channels, imports it;
 * - the sandbox stands in for a service we do not own, so it shares nothing of the client: it
 *   imports the contract's types (src-shared/api), its own folder and src-main/native (which
 *   loads the native modules for the runtime, the one thing both sides must do alike);
 * - the renderer and the preload import only src-shared; src-shared imports nothing else of ours.
 */
const mainFolders = readdirSync(new URL('./src-main', import.meta.url), { withFileTypes: true })
  .filter((entry) => entry.isDirectory())
  .map((entry) => entry.name)
const notServing = mainFolders.filter((name) => !['ipc', 'services-thread'].includes(name))
const LAYERS = [
  {
    target: notServing.map((name) => `./src-main/${name}/**`),
    from: './src-main/ipc',
    message: 'Only the services thread uses the IPC layer: a feature declares its own interface.',
  },
  {
    target: './src-main/sandbox/**',
    from: './src-main',
    except: ['./sandbox', './native'],
    message:
      'The sandbox stands in for the service: it imports src-shared/api, its own folder and src-main/native only.',
  },
  {
    target: './src-main/sandbox/**',
    from: './src-shared',
    except: ['./api'],
    message:
      'The sandbox stands in for the service: it imports src-shared/api, its own folder and src-main/native only.',
  },
  {
    target: ['./src-renderer/**', './src-preload/**'],
    from: ['./src-main', './test'],
    message: 'The renderer and the preload import only src-shared.',
  },
  {
    target: './src-renderer/**',
    from: './src-preload',
    message: 'The renderer imports only src-shared.',
  },
  {
    target: './src-preload/**',
    from: './src-renderer',
    message: 'The preload imports only src-shared.',
  },
  {
    target: './src-shared/**',
    from: ['./src-main', './src-renderer', './src-preload', './test'],
    message: 'src-shared imports nothing else of ours: both ends of the app build on it.',
  },
]

export default tseslint.config(
  { ignores: ['out/**', 'dist/**', 'coverage/**', 'node_modules/**', 'src-shared/api/*.gen.ts'] },
  js.configs.recommended,
  ...tseslint.configs.strictTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/restrict-template-expressions': ['error', { allowNumber: true }],
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_' },
      ],
      // Dynamic data from the network is validated with zod; `never` is used for exhaustiveness.
      '@typescript-eslint/no-unnecessary-condition': [
        'error',
        { allowConstantLoopConditions: true },
      ],
    },
  },
  {
    files: ['src-main/**', 'src-shared/**', 'src-renderer/**', 'src-preload/**'],
    plugins: { 'import-x': importX },
    settings: {
      'import-x/resolver-next': [
        createNodeResolver({ extensions: ['.ts', '.tsx', '.mts', '.mjs', '.js', '.json'] }),
      ],
    },
    rules: { 'import-x/no-restricted-paths': ['error', { zones: LAYERS }] },
  },
  {
    files: ['src-main/**', 'src-preload/**', 'test/**', 'scripts/**', 'bin/**', '*.config.*'],
    languageOptions: { globals: globals.node },
  },
  {
    // Vitest's asymmetric matchers (expect.any, expect.arrayContaining) are typed `any` by design.
    files: ['test/**'],
    rules: { '@typescript-eslint/no-unsafe-assignment': 'off' },
  },
  {
    files: ['src-renderer/**', 'test/renderer/**'],
    languageOptions: { globals: globals.browser },
    plugins: { 'react-hooks': reactHooks },
    rules: reactHooks.configs.recommended.rules,
  },
  {
    files: ['**/*.js', '**/*.mjs'],
    ...tseslint.configs.disableTypeChecked,
  },
)
