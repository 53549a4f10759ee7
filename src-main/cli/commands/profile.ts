import { Option, type Command } from 'commander'
import { EXIT } from '../exit-codes'
import type { CommandContext } from '../context'
import { CliError } from '../errors'

interface AddFlags {
  baseUrl: string
  org?: string
  key?: string
  apiKey?: string
}

export function registerProfile(program: Command, context: CommandContext): void {
  const profile = program
    .command('profile')
    .description(
      'Manage service profiles (name, base URL, organization); their API keys live in the OS keychain only.',
    )

  profile
    .command('add')
    .description(
      'Add a profile. The API key is read from stdin (or typed, hidden, at a terminal), checked against the service, then saved in the OS keychain.',
    )
    .argument('<name>', 'profile name: 1 to 64 letters, digits, "-", "_" or "."')
    .requiredOption('--base-url <url>', 'the service address, e.g. https://api.example.com')
    .option('--org <id>', "organization id (UUID) to work in; default: the key's own")
    // Declared only to refuse them without echoing the value, as an unknown option would.
    .addOption(new Option('--key <key>').hideHelp())
    .addOption(new Option('--api-key <key>').hideHelp())
    .action(async (name: string, flags: AddFlags) => {
      if (flags.key !== undefined || flags.apiKey !== undefined) {
        throw new CliError(
          'The API key is read from stdin only, never from the command line, where it would stay in the shell history and show in the process list. Pipe it in: `atelier profile add NAME --base-url URL < key.txt`. Nothing was saved.',
          EXIT.usage,
          'KEY_IN_ARGUMENTS',
        )
      }
      const { addProfile } = await import('../actions/profile')
      await addProfile(context, name, flags)
    })

  profile
    .command('list')
    .description('List the profiles and which one is current. Keys are never shown.')
    .action(async () => {
      const { listProfiles } = await import('../actions/profile')
      await listProfiles(context)
    })

  profile
    .command('use')
    .description('Make a profile the current one: commands use it unless --profile says otherwise.')
    .argument('<name>', 'profile name')
    .action(async (name: string) => {
      const { useProfile } = await import('../actions/profile')
      await useProfile(context, name)
    })

  profile
    .command('remove')
    .description('Remove a profile and delete its key from the OS keychain.')
    .argument('<name>', 'profile name')
    .action(async (name: string) => {
      const { removeProfile } = await import('../actions/profile')
      await removeProfile(context, name)
    })

  profile
    .command('check')
    .description(
      "Check a profile's stored key against the service and print the balance (default: --profile, else the current profile).",
    )
    .argument('[name]', 'profile name')
    .action(async (name: string | undefined) => {
      const { checkProfile } = await import('../actions/profile')
      await checkProfile(context, name)
    })
}
