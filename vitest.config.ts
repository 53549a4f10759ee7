import { defineConfig } from 'vitest/config'

export default defineConfig({
  test: {
    include: ['test/**/*.test.{ts,tsx}'],
    environment: 'node',
    // Builds out/ once per run when it does not match the sources (test/global-setup.ts).
    globalSetup: ['test/global-setup.ts'],
    testTimeout: 20_000,
    hookTimeout: 30_000,
    // A poll waits for something that will happen (a sync ending, a screen drawn); on a machine
    // running two suites at once that takes seconds, not vitest's default one. A poll that can
    // never pass still fails, later.
    expect: { poll: { timeout: 10_000 } },
    typecheck: {
      enabled: true,
      include: ['test/**/*.test-d.ts'],
      tsconfig: './tsconfig.node.json',
    },
    benchmark: { include: ['test/bench/**/*.bench.ts'] },
  },
})
