import { existsSync } from 'node:fs'
import { chromium, type Browser } from 'playwright-core'

const CHROMIUM = process.env.ATELIER_CHROMIUM ?? '/usr/bin/chromium'

/**
 * Whether the UI tests can run here. In CI they must: `.ci/run` installs Chromium, and a
 * missing browser is a failure there, never a skip. Elsewhere they skip, and say why.
 */
export function chromiumAvailability(): { available: boolean; reason: string } {
  if (existsSync(CHROMIUM)) return { available: true, reason: '' }
  const reason = `Chromium is not installed at ${CHROMIUM} (apt-get install chromium), so the UI tests are skipped.`
  if (process.env.CI) throw new Error(`${reason} In CI this is an error: .ci/run must install it.`)
  console.warn(`SKIPPED: ${reason}`)
  return { available: false, reason }
}

export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--no-sandbox',
      '--headless',
      '--disable-gpu',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--disable-quic',
    ],
  })
}
