import AccessProtocol
import ByteCore
import Codecs
import Foundation
import LockRuntime
import OfflineUnlock
import Synchronization
@preconcurrency import VirtualPN532

/// The stdin console of `lock run`: taps software phones on the lock's own virtual reader, and
/// moves the running lock's clock (the state directory belongs to this process while it runs).
/// Sendable: it is handed to the thread reading stdin; its reader (VirtualPN532, not yet in Swift 6) is
/// used from that thread only.
struct TapConsole: Sendable {
    static let usage = "tap KEY.pem DOC.cbor…, remove, status, clock show|set TIME|advance DURATION|power-loss, quit"
    let service: LockService
    let reader: VirtualReader?
    let say: @Sendable (String) -> Void
    let quit: @Sendable () -> Void
    /// The phones tapped so far, by key and documents: tapping one again is the same phone, which
    /// kept the FAST key its first grant gave it (a second tap is FAST, as with a real phone).
    let phones = Phones()

    final class Phones: Sendable {
        let known = Mutex<[String: CredentialSession]>([:])
        /// At most this many phones are kept (a console session taps a handful).
        static let limit = 64
    }

    func handle(_ line: String) {
        let words = line.split(separator: " ").map(String.init)
        guard let verb = words.first else { return }
        switch verb {
        case "tap":
            guard let reader else { return say("tap needs the lock's own virtual reader (--nfc virtual)") }
            do {
                let card = try credential(key: words.dropFirst().first, documents: Array(words.dropFirst(2)))
                try reader.insert(card)
                say("credential in the field")
            } catch {
                say("tap failed: \(error)")
            }
        case "remove":
            guard let reader else { return say("remove needs the lock's own virtual reader (--nfc virtual)") }
            reader.remove()
            say("field empty")
        case "status":
            say("bolt \(service.lock.boltName); card \(reader.map { $0.card == nil ? "none" : "present" } ?? "n/a (no virtual reader)")")
        case "clock":
            clock(Array(words.dropFirst()))
        case "quit":
            quit()
        default:
            say("unknown command '\(verb)': \(Self.usage)")
        }
    }

    private func clock(_ args: [String]) {
        let lock = service.lock
        do {
            switch (args.first, args.count) {
            case ("show", 1): break
            case ("set", 2): try lock.setClock(try KeyFiles.time(args[1], flag: "clock set"), trusted: true)
            case ("advance", 2): try lock.advanceClock(try KeyFiles.duration(args[1], flag: "clock advance", within: 0...DurationText.maximum))
            case ("power-loss", 1): try lock.powerLoss()
            default: return say("usage: clock show | clock set 2026-03-02T09:00:00Z | clock advance 8h | clock power-loss")
            }
            say("clock \(RFC3339.format(lock.clock.now())) (\(lock.engine.state.clock.trusted ? "trusted" : "untrusted"))")
        } catch {
            say("clock: \(error)")
        }
    }

    /// A software phone that trusts this lock's reader, with the given key and documents: the one
    /// tapped before with the same files, else a new one.
    private func credential(key: String?, documents: [String]) throws -> CredentialSession {
        guard let key else { throw UserError(message: "usage: tap KEY.pem DOC.cbor [DOC.cbor…]") }
        let name = ([key] + documents).joined(separator: "\u{0}")
        if let known = phones.known.withLock({ $0[name] }) { return known }
        let phone = try service.phone(key: key, documents: documents)
        phones.known.withLock { known in
            if known.count >= Phones.limit { known.removeAll() }
            known[name] = phone
        }
        return phone
    }
}
