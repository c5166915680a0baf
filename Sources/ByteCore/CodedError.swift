/// The one error shape of LockBench's modules (`CBORError`, `APDUError`, `ProtocolError`,
/// `LockError`, `BLEError`, `NFCError`…): a stable machine-readable `code` that tests, `--json`
/// and scripts match on (its raw value never changes once released), and a `reason` for people
/// that says what is wrong, where, and what to do. One module's errors stay one type, so a caller
/// switches over one `Code` enum; callers that handle any module's errors use `any CodedError`.
public protocol CodedError: Error, CustomStringConvertible {
    associatedtype Code: RawRepresentable, Sendable where Code.RawValue == String
    var code: Code { get }
    var reason: String { get }
}

extension CodedError {
    /// The code's stable text (`cbor.truncated`, `lock.state_in_use`).
    public var codeName: String { code.rawValue }

    /// `code: reason`; a type whose users read the reason alone (the radios) says so itself.
    public var description: String { "\(code.rawValue): \(reason)" }
}
