import type { Command } from 'commander'
import type { SniffedMediaType } from '../../uploads'
import { DEFAULT_FILE_CONCURRENCY, DEFAULT_PARTS_IN_FLIGHT } from '../../uploads/folder/defaults'
import { EXIT } from '../exit-codes'
import type { UploadFlags } from '../actions/upload'
import type { CommandContext } from '../context'
import { CliError } from '../errors'

const usage = (message: string) => new CliError(message, EXIT.usage, 'USAGE')
const collect = (value: string, previous: string[]) => [...previous, value]

function positive(value: string | undefined, flag: string, fallback: number): number {
  if (value === undefined) return fallback
  const n = Number(value)
  if (!Number.isInteger(n) || n < 1 || n > 64) {
    throw usage(`${flag} takes a whole number from 1 to 64, not "${value}".`)
  }
  return n
}

function mediaTypesOf(value: string | undefined): SniffedMediaType[] {
  if (value === undefined) return ['image', 'video']
  const types = value.split(',').map((type) => type.trim())
  const bad = types.filter((type) => type !== 'image' && type !== 'video')
  if (bad.length > 0 || types.length === 0) {
    throw usage(`--media takes image, video or both (image,video), not "${value}".`)
  }
  return types as SniffedMediaType[]
}

export function registerUpload(program: Command, context: CommandContext): void {
  program
    .command('upload')
    .description('upload a folder of images and videos into the assets (resumable, deduplicated)')
    .argument('<dir>', 'the local folder')
    .option(
      '--folder <name>',
      'the asset folder (top level) that receives it; made when missing (default: the folder name)',
    )
    .option('--no-folder', "put the folder's contents at the top level of the assets")
    .option(
      '--concurrency <n>',
      `files sent at the same time (default ${DEFAULT_FILE_CONCURRENCY})`,
    )
    .option('--parts <n>', `parts in flight across files (default ${DEFAULT_PARTS_IN_FLIGHT})`)
    .option('--include <glob>', 'only files matching (repeatable; *.png, raw/**)', collect, [])
    .option('--exclude <glob>', 'leave out files and folders matching (repeatable)', collect, [])
    .option('--media <types>', 'image, video, or image,video (default)')
    .option('--watch', 'keep watching the folder and upload what appears in it', false)
    .action(async (dir: string, flags: UploadFlags) => {
      const concurrency = positive(flags.concurrency, '--concurrency', DEFAULT_FILE_CONCURRENCY)
      const partsInFlight = positive(flags.parts, '--parts', DEFAULT_PARTS_IN_FLIGHT)
      const mediaTypes = mediaTypesOf(flags.media)
      const { upload } = await import('../actions/upload')
      await upload(context, dir, flags, { concurrency, partsInFlight, mediaTypes })
    })
}
