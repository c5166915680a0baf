/// Deliberate misbehaviour of the lock's reader, for `lockbench lock run|transact --fault …`: a
/// lock that `lockbench conformance reader` must catch, each fault by the check that names it.
public struct ReaderFaults: OptionSet, Sendable, Hashable {
    public var rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }

    /// Accept a device signature that does not verify (rdr.neg.wrong-ud-signature catches it).
    public static let acceptBadDeviceSignature = ReaderFaults(rawValue: 1 << 0)
    /// Send commands without Le (rdr.le catches it; a strict phone answers 6701).
    public static let omitLe = ReaderFaults(rawValue: 1 << 1)

    /// Send no reader certificate although one is configured (the rdr.cert.* checks catch it).
    public static let omitCertificate = ReaderFaults(rawValue: 1 << 2)

    public static let names: [(String, ReaderFaults)] = [
        ("accept-bad-device-signature", .acceptBadDeviceSignature), ("omit-le", .omitLe), ("omit-certificate", .omitCertificate),
    ]
}
