import ByteCore

/// An in-memory APDU link: the reader's transceiver hands each command straight to a responder.
/// A test double for tests and the benchmark (radios provide their own transceivers), kept out of
/// the production modules.
public final class InMemoryLink: APDUTransceiver {
    public let responder: APDUResponder
    /// Optional tap: sees every command and may rewrite the response (a man in the middle).
    public var tap: ((_ command: [UInt8], _ response: [UInt8]) -> [UInt8])?

    /// Tell the responder each answer has gone (`APDUResponder.answerSent`), as the virtual PN532 does.
    public var announcesAnswers = false

    public init(_ responder: APDUResponder) { self.responder = responder }

    public convenience init(_ responder: APDUResponder, announcesAnswers: Bool) {
        self.init(responder)
        self.announcesAnswers = announcesAnswers
    }

    public func transceive(_ command: [UInt8]) throws -> [UInt8] {
        let response = responder.respond(to: command)
        if announcesAnswers { responder.answerSent() }
        return tap?(command, response) ?? response
    }
}
