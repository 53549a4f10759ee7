import { InvalidArgumentError, Option, type Command } from 'commander'
import type { OutboxState } from '../../db'
import { EXIT } from '../exit-codes'
import type { CommandContext } from '../context'
import { CliError } from '../errors'

const STATES = ['pending', 'rejected', 'sent'] as const satisfies readonly OutboxState[]

function parseSeq(value: string): number {
  const seq = Number(value)
  if (!/^\d+$/.test(value) || !Number.isSafeInteger(seq) || seq < 1) {
    throw new InvalidArgumentError('SEQ is the number of an outbox entry, e.g. 12.')
  }
  return seq
}

export function registerOutbox(program: Command, context: CommandContext): void {
  const outbox = program
    .command('outbox')
    .description('list the writes made offline (feedback, flow and folder changes) and send them')
    .addOption(new Option('--state <state>', 'only entries in this state').choices(STATES))
    .action(async (flags: { state?: OutboxState }) => {
      const { listOutbox } = await import('../actions/outbox')
      await listOutbox(context, flags)
    })

  outbox
    .command('send')
    .description('send the waiting writes now, oldest first')
    .action(async () => {
      const { sendOutbox } = await import('../actions/outbox')
      await sendOutbox(context)
    })

  outbox
    .command('retry')
    .description('put a refused write back in its place and send the waiting writes')
    .argument('<seq>', 'the number of the refused entry', parseSeq)
    .action(async (seq: number) => {
      const { retryOutboxEntry } = await import('../actions/outbox')
      await retryOutboxEntry(context, seq)
    })

  outbox
    .command('discard')
    .description('forget a refused write, once you have seen why it was refused')
    .argument('<seq>', 'the number of the refused entry', parseSeq)
    .action(async (seq: number) => {
      const { discardOutboxEntry } = await import('../actions/outbox')
      discardOutboxEntry(context, seq)
    })
}

type Rating = { isPositive: boolean | null }

function ratingOf(flags: FeedbackFlags): Rating {
  const chosen = [flags.positive, flags.negative, flags.clear].filter(Boolean).length
  if (chosen !== 1) {
    throw new CliError(
      'Give exactly one of --positive, --negative or --clear.',
      EXIT.usage,
      'USAGE',
    )
  }
  if (flags.clear && flags.comment !== undefined) {
    throw new CliError(
      'A comment goes with a rating; --clear drops the rating and its comment.',
      EXIT.usage,
      'USAGE',
    )
  }
  return { isPositive: flags.clear ? null : Boolean(flags.positive) }
}

interface FeedbackFlags {
  positive?: boolean
  negative?: boolean
  clear?: boolean
  comment?: string
}

export function registerFeedback(program: Command, context: CommandContext): void {
  program
    .command('feedback')
    .description(
      'rate an evaluation (thumbs-up or down, with a comment); kept and sent later when offline',
    )
    .argument('<evaluation-id>', 'the evaluation to rate')
    .option('--positive', 'thumbs-up')
    .option('--negative', 'thumbs-down')
    .option('--clear', 'remove the rating')
    .option('--comment <text>', 'why (up to 2000 characters)')
    .action(async (evaluationId: string, flags: FeedbackFlags) => {
      const { isPositive } = ratingOf(flags)
      const { giveFeedback } = await import('../actions/outbox')
      await giveFeedback(context, evaluationId, { isPositive, comment: flags.comment ?? null })
    })
}
