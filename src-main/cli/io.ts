/** Where a command writes: real streams in the binary, buffers in tests. */
export interface CliIo {
  stdout: (text: string) => void
  stderr: (text: string) => void
}

export const processIo: CliIo = {
  stdout: (text) => process.stdout.write(text),
  stderr: (text) => process.stderr.write(text),
}

/** The options every command understands. */
export interface GlobalOptions {
  home: string
  profile?: string
  json: boolean
}
