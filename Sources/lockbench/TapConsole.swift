import AccessProtocol
import ByteCore
import Codecs
import Foundation
import LockRuntime
import OfflineUnlock
import VirtualPN532

/// The stdin console of `lock run --nfc virtual`: taps software phones on the lock's own virtual reader.
struct TapConsole {
    let service: LockService
    let reader: VirtualReader
    let say: (String) -> Void
    let quit: () -> Void

    func handle(_ line: String) {
        let words = line.split(separator: " ").map(String.init)
        guard let verb = words.first else { return }
        switch verb {
        case "tap":
            do {
                let card = try credential(key: words.dropFirst().first, documents: Array(words.dropFirst(2)))
                try reader.insert(card)
                say("credential in the field")
            } catch {
                say("tap failed: \(error)")
            }
        case "remove":
            reader.remove()
            say("field empty")
        case "status":
            say("bolt \(service.lock.boltName); card \(reader.card == nil ? "none" : "present")")
        case "quit":
            quit()
        default:
            say("unknown command '\(verb)': tap KEY.pem DOC.cbor…, remove, status, quit")
        }
    }

    /// A software phone that trusts this lock's reader, with the given key and documents.
    private func credential(key: String?, documents: [String]) throws -> CredentialSession {
        guard let key else { throw UserError(message: "usage: tap KEY.pem DOC.cbor [DOC.cbor…]") }
        let ids = try service.configuration.readerIdentity()
        let trusted = TrustedReader(groupID: ids.groupID, publicKey: Primitives.point(of: service.lock.readerSigningKey))
        return try SoftwarePhone.make(key: key, documents: documents, trusting: [trusted])
    }
}
