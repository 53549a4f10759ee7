#!/usr/bin/env node
// The `atelier` command runs straight from the TypeScript sources (through tsx), so it works
// in a fresh checkout right after `npm install`, with no build step.
import { register } from 'tsx/esm/api'

register()
await import('../src-main/cli/main.ts')
