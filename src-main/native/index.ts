/**
 * Native modules and the runtime that loads them: which better-sqlite3 binary Node and Electron
 * load (`openSqlite`, used by every place that opens an SQLite database: the databases, the
 * media index, the sandbox), the clear error when one cannot load, and `findUp`, which finds a
 * file of the checkout or of the packaged app from wherever the bundler put a module.
 */
export {
  ELECTRON_NATIVE_DIR,
  electronSqliteBinary,
  openSqlite,
  sqliteBinding,
  sqliteLoadError,
  type RuntimeFacts,
  type RuntimeVersions,
  type SqliteBinding,
} from './sqlite-binding'
export {
  NativeModuleError,
  isNativeModuleError,
  type NativeModuleErrorCode,
  type NativeModuleFacts,
} from './errors'
export { findUp } from './find-up'
export { sharp } from './sharp'
