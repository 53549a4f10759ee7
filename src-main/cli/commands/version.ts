import type { Command } from 'commander'
import { APP_NAME, APP_VERSION } from '../../app/version'
import type { CommandContext } from '../context'

export function registerVersion(program: Command, context: CommandContext): void {
  program
    .command('version')
    .description('Print the version of Atelier and of the runtime it uses.')
    .action(() => {
      const info = {
        name: APP_NAME.toLowerCase(),
        version: APP_VERSION,
        node: process.versions.node,
        platform: `${process.platform}-${process.arch}`,
      }
      context.print(info, `${APP_NAME} ${info.version} (node ${info.node}, ${info.platform})`)
    })
}
