import { describe, expect, it } from 'vitest'
import {
  contentSecurityPolicy,
  isAllowedNavigation,
  isSafeExternalUrl,
  isTrustedSender,
} from '../../src-main/app/policy'

const fileApp = 'file:///opt/Atelier/resources/app.asar/out/renderer/index.html'
const devApp = 'http://localhost:5173/'

describe('the window security policy', () => {
  it('forbids inline and remote scripts in the built app', () => {
    const csp = contentSecurityPolicy()
    expect(csp).toContain("script-src 'self'")
    expect(csp).not.toContain('unsafe-inline')
    expect(csp).not.toContain('unsafe-eval')
    expect(csp).toContain("object-src 'none'")
    expect(csp).toContain("frame-ancestors 'none'")
  })

  it('allows the dev server its hot-reload socket and inline styles, still no inline scripts', () => {
    const csp = contentSecurityPolicy({ dev: { origin: 'http://localhost:5173' } })
    expect(csp).toContain("connect-src 'self' ws://localhost:5173")
    expect(csp).toMatch(/script-src 'self'(;|$)/)
  })

  it.each([
    ['https://example.com', true],
    ['http://example.com/path?q=1', true],
    ['file:///etc/passwd', false],
    ['javascript:alert(1)', false],
    ['smb://server/share', false],
    ['', false],
    ['not a url', false],
  ])('opens %s externally: %s', (url, expected) => {
    expect(isSafeExternalUrl(url)).toBe(expected)
  })

  it.each([
    [fileApp, fileApp, true],
    [`${fileApp}#/runs`, fileApp, true],
    ['file:///etc/passwd', fileApp, false],
    ['https://evil.example/', fileApp, false],
    ['javascript:alert(1)', fileApp, false],
    [devApp, devApp, true],
    ['http://localhost:5174/', devApp, false],
    ['http://localhost:5173/other.html', devApp, false],
  ])('navigating to %s from %s is allowed: %s', (target, app, expected) => {
    expect(isAllowedNavigation(target, app)).toBe(expected)
  })

  it('trusts only the main frame of the app document', () => {
    expect(isTrustedSender({ url: fileApp, isMainFrame: true }, fileApp)).toBe(true)
    expect(isTrustedSender({ url: fileApp, isMainFrame: false }, fileApp)).toBe(false)
    expect(isTrustedSender({ url: 'https://evil.example/', isMainFrame: true }, fileApp)).toBe(
      false,
    )
    expect(isTrustedSender({ url: 'about:blank', isMainFrame: true }, fileApp)).toBe(false)
  })
})
