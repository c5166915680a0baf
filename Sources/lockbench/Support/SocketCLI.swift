import AccessProtocol
import ArgumentParser
import Foundation
import OfflineUnlock

/// Parsing the socket transport's flags: `HOST:PORT` addresses and protocol version lists.
enum SocketCLI {
    /// `host:port` → parts.
    static func address(_ text: String, flag: String = "--connect") throws -> (String, UInt16) {
        guard let colon = text.lastIndex(of: ":"), let port = UInt16(text[text.index(after: colon)...]), port > 0 else {
            throw ValidationError("\(flag) \"\(text)\" is not HOST:PORT, e.g. 127.0.0.1:5000")
        }
        return (String(text[..<colon]), port)
    }

    /// `1.0,0.9` → [0x0100, 0x0009].
    static func versions(_ text: String, flag: String) throws -> [UInt16] {
        let list = text.split(separator: ",").map { ProtocolVersionText.parse(String($0).trimmingCharacters(in: .whitespaces)) }
        guard !list.isEmpty, list.allSatisfy({ $0 != nil }) else {
            throw ValidationError("\(flag) \"\(text)\" is not a list of versions like 1.0,0.9")
        }
        return list.map { $0! }
    }

}
