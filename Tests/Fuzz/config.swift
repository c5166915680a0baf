// fuzz-module: Lock
// fuzz-link: OfflineUnlock AccessProtocol Certification
// libFuzzer entry for the lock configuration file: the input is the file's bytes, loaded by
// `LockConfiguration.load(_:path:)` exactly as `lock run` / `config check` load it (JSON, policy
// and transaction bounds, reader identity, the reader key and issuer files it names — fixed files
// the entry writes once into a scratch directory). Checks: nothing traps; a configuration that
// loads has every duration finite and within its bounds, and re-encodes to a file that loads equal.
// (The radios' part, `nfc`/`ble`, is LockRuntime's `RadioSettings`: LockFileTests checks its bounds.)

import AccessProtocol
import Crypto
import Foundation
import OfflineUnlock

private let directory: String = {
    let d = NSTemporaryDirectory() + "lockbench-fuzz-config-\(getpid())"
    try! FileManager.default.createDirectory(atPath: d, withIntermediateDirectories: true)
    let key = try! P256.Signing.PrivateKey(rawRepresentation: [UInt8](repeating: 0x22, count: 32))
    let issuer = try! P256.Signing.PrivateKey(rawRepresentation: [UInt8](repeating: 0x11, count: 32))
    precondition(FileManager.default.createFile(atPath: d + "/reader.key.pem", contents: Data(key.pemRepresentation.utf8),
                                                attributes: [.posixPermissions: 0o600]))
    precondition(FileManager.default.createFile(atPath: d + "/issuer.pub.pem", contents: Data(issuer.publicKey.pemRepresentation.utf8)))
    return d
}()

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzConfig(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Data(UnsafeBufferPointer(start: data, count: size))
    let path = directory + "/lock.json"
    guard let config = try? LockConfiguration.load(bytes, path: path) else { return 0 }
    do { try config.policy.validate() } catch { fatalError("a loaded policy is out of bounds: \(error.message)") }
    if let t = config.transaction {
        guard TransactionLimits.Bounds.maxCommands.contains(t.maxCommands), TransactionLimits.Bounds.maxResponseParts.contains(t.maxResponseParts),
              TransactionLimits.Bounds.maxBytes.contains(t.maxBytes), TransactionLimits.Bounds.maxDuration.contains(t.maxDuration)
        else { fatalError("loaded transaction limits out of bounds: \(t)") }
    }
    _ = try? config.initialClock()
    let again: LockConfiguration
    do { again = try LockConfiguration.load(config.encoded(), path: path) } catch {
        fatalError("a loaded configuration re-encodes to a file that does not load: \(error)\n\(String(decoding: config.encoded(), as: UTF8.self))")
    }
    guard again == config else { fatalError("configuration does not round-trip:\n\(config)\n\(again)") }
    return 0
}
