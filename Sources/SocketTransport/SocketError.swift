import ByteCore

/// The one error type of the socket transport: a stable code and a reason naming the call and errno.
public struct SocketError: CodedError, CustomStringConvertible, Equatable, Sendable {
    public enum Code: String, Sendable, CaseIterable {
        /// A socket call failed, the peer closed, or nothing arrived in time.
        case transport = "socket.transport"
        /// The byte stream does not frame (a length over the limit, no boundary).
        case malformed = "socket.malformed"
    }

    public let code: Code
    public let reason: String

    public init(_ code: Code, _ reason: String) {
        self.code = code
        self.reason = reason
    }

    public var description: String { reason }
}
