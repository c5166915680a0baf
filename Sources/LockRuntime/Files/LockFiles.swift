import Foundation
import Lock

/// Opening a lock from its configuration file, every failure a `UserError` that names the file
/// and the field: exit 3 when the machine failed (I/O, state in use), 2 when the input was bad.
public enum LockFiles {
    /// The lock's configuration (docs/lock-config.md), checked.
    public static func configuration(_ path: String) throws -> LockConfiguration {
        do { return try LockConfiguration.load(path: path) } catch { throw UserError(lockError: error) }
    }

    /// The whole file: the lock's part and the radios' (`nfc`, `ble`).
    public static func file(_ path: String) throws -> LockFile {
        do { return try LockFile.load(path: path) } catch { throw UserError(lockError: error) }
    }

    /// The lock alone (engine, bolt, clock, state, audit): the commands that need no radio.
    public static func lock(_ path: String) throws -> EmulatedLock {
        do { return try EmulatedLock(configuration: try configuration(path)) } catch let e as LockError {
            throw UserError(lockError: e)
        }
    }

    /// The lock and its reader, ready for a radio.
    public static func service(_ path: String) throws -> LockService { try service(try file(path), path: path) }

    /// The lock and its reader from a file already read (`lock run` checks its flags against the
    /// file before the state directory is taken).
    public static func service(_ file: LockFile, path: String) throws -> LockService {
        do { return try LockService(configuration: file.lock, radios: file.radios) } catch let e as LockError {
            throw UserError(lockError: e)
        } catch {
            throw UserError(message: "\(path): \(error)")
        }
    }
}
