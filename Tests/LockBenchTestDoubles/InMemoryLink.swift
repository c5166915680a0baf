import ByteCore

/// An in-memory APDU link: the reader's transceiver hands each command straight to a responder.
/// A test double for tests and the benchmark (radios provide their own transceivers), kept out of
/// the production modules.
public final class InMemoryLink: APDUTransceiver {
    public let responder: APDUResponder
    /// Optional tap: sees every command and may rewrite the response (a man in the middle).
    public var tap: ((_ command: [UInt8], _ response: [UInt8]) -> [UInt8])?

    public init(_ responder: APDUResponder) { self.responder = responder }

    public func transceive(_ command: [UInt8]) throws -> [UInt8] {
        let response = responder.respond(to: command)
        return tap?(command, response) ?? response
    }
}
