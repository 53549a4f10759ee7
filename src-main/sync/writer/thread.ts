import { parentPort, workerData } from 'node:worker_threads'
import { Mirror, openConnection, SYNCHRONOUS } from '../../db'
import { writeIncrementalPage } from '../collections'
import { threadError, type FromThread, type ToThread, type WriterData } from './protocol'

/*
 * The page writer's thread: a connection of its own to the mirror file, with the settings and
 * repositories of every other (the file is already migrated: the main thread opened it first),
 * writing one page at a time in the order they come. WAL lets the main thread's connection go
 * on reading meanwhile.
 */

const port = parentPort
if (port === null) throw new Error('The page writer runs in a worker thread.')
const { file } = workerData as WriterData
let now = Date.now()
const mirror = new Mirror(openConnection(file, SYNCHRONOUS.mirror), file, () => now)
const send = (message: FromThread) => {
  port.postMessage(message)
}
/** The records of pages that came in parts, by page, until the page itself comes. */
const parts = new Map<number, unknown[]>()

port.on('message', (message: ToThread) => {
  if (message.type === 'close') {
    mirror.close()
    send({ type: 'closed' })
    port.close()
    return
  }
  if (message.type === 'records') {
    const records = parts.get(message.id) ?? []
    for (const record of message.records) records.push(record)
    parts.set(message.id, records)
    return
  }
  now = message.now
  const before = parts.get(message.id) ?? []
  parts.delete(message.id)
  const page = { ...message.page, items: [...before, ...message.page.items] }
  try {
    const { written, removed } = writeIncrementalPage(mirror, page)
    send({ type: 'written', id: message.id, written, removed })
  } catch (error) {
    send({ type: 'failed', id: message.id, error: threadError(error) })
  }
})
send({ type: 'ready' })
