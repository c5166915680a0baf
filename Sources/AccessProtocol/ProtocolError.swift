import ByteCore
import Codecs
import OfflineUnlock

/// One error type for the access protocol layer: a stable code, a human reason, and the deny
/// reason the reader reports for it.
public struct ProtocolError: CodedError, Equatable, CustomStringConvertible, Sendable {
    public enum Code: String, Sendable {
        case malformed = "protocol.malformed"
        case badStatus = "protocol.bad_status"
        case unexpected = "protocol.unexpected"
        case badKey = "protocol.bad_key"
        case badSignature = "protocol.bad_signature"
        case decryptFailed = "protocol.decrypt_failed"
        case counterReuse = "protocol.counter_reuse"
        case counterExhausted = "protocol.counter_exhausted"
        case noCommonVersion = "protocol.no_common_version"
        case transport = "protocol.transport"
    }
    public var code: Code
    public var reason: String

    public init(_ code: Code, _ reason: String) {
        self.code = code
        self.reason = reason
    }


    static func from(_ error: TLVError, _ what: String) -> ProtocolError {
        ProtocolError(.malformed, "\(what): \(error)")
    }

    static func from(_ error: APDUError, _ what: String) -> ProtocolError {
        ProtocolError(.malformed, "\(what): \(error)")
    }
}
