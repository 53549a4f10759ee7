import pkg from '../../package.json' with { type: 'json' }

export const APP_NAME = 'Atelier'
export const APP_VERSION: string = pkg.version
