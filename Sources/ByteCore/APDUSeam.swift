/// The seam between radios and the access protocol: whole APDUs in and out.
/// NFC (libnfc, the virtual PN532), BLE (an L2CAP credit-based channel) and the TCP socket
/// transport all carry exactly this, so the protocol layer never knows which radio it is on.

/// The card side of a radio: something in the field that answers command APDUs (a credential).
/// Sendable: radios call it from their own I/O threads.
public protocol APDUResponder: AnyObject, Sendable {
    /// Answers one command APDU with a response APDU (data ‖ SW1 SW2).
    func respond(to command: [UInt8]) -> [UInt8]
    /// The field dropped or the card left: forget any session state.
    func reset()
    /// Whether `respond` answers from memory at once (no I/O, no waiting on anything): then a
    /// virtual reader may call it on its own I/O thread instead of handing each APDU to another
    /// thread and back. False unless a responder says so.
    var answersAtOnce: Bool { get }
    /// The last answer is on its way to the reader: a moment to do work the next command will
    /// need, while the reader works on the answer (a phone's ECDH after AUTH0). Transports that
    /// know the moment call it; a responder must not depend on it.
    func answerSent()
}

extension APDUResponder {
    public var answersAtOnce: Bool { false }
    public func answerSent() {}
}

/// The reader side of a radio: sends a command APDU, waits for the response.
public protocol APDUTransceiver: AnyObject {
    /// Sends `command`; returns the response APDU (data ‖ SW1 SW2) or throws when the card is gone.
    func transceive(_ command: [UInt8]) throws -> [UInt8]
}

/// The radio a transaction ran over; recorded in the audit log.
public enum RadioInterface: String, Codable, Sendable, CaseIterable {
    case nfc, ble, socket
}
