import { processIo, runCli } from './index'

// The `atelier` binary: run the command line, then leave with its exit code.
process.exitCode = await runCli(process.argv.slice(2), processIo)
