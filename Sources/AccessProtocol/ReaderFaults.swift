/// Deliberate misbehaviour of the lock's reader, for `lockbench lock run|transact --fault …`: a
/// lock that `lockbench conformance reader` must catch, each fault by the check that names it.
public struct ReaderFaults: OptionSet, Sendable, Hashable {
    public var rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }

    /// Accept a device signature that does not verify (rdr.neg.wrong-ud-signature catches it).
    public static let acceptBadDeviceSignature = ReaderFaults(rawValue: 1 << 0)
    /// Send commands without Le (rdr.le catches it; a strict phone answers 6701).
    public static let omitLe = ReaderFaults(rawValue: 1 << 1)
    /// The lock's engine, not the session: take an issuer certificate's key (x5chain) without
    /// checking that a trusted issuer CA signed it or that it is valid (the negative issuer
    /// certificate cases whose certificate parses catch it; `LockConfiguration.faults`).
    public static let skipIssuerCertificateChecks = ReaderFaults(rawValue: 1 << 5)

    /// The lock's engine, not the session: neither remember nor check access-document validity
    /// iterations (Aliro 0.9.4 §7.2.3; the rdr.*.validity-iteration, credential-issuer-removed and
    /// kpersistent-removed checks catch it; `LockConfiguration.faults`).
    public static let ignoreValidityIteration = ReaderFaults(rawValue: 1 << 6)

    /// The lock's engine, not the session: read every revocation document as a whole list
    /// (OVERWRITE), ignoring an APPEND change mode — a reader written for lists that carry
    /// everything (rdr.stepup.rd catches it at iteration 2; `LockConfiguration.faults`).
    public static let revocationAppendAsOverwrite = ReaderFaults(rawValue: 1 << 7)

    /// Complete an RKE transaction (`02 06`) at the completed notification, ignoring the
    /// phone's RKE request (the ble.rdr RKE checks catch it: no "reader status changed").
    public static let ignoreRKE = ReaderFaults(rawValue: 1 << 2)

    /// Ask FAST in an RKE transaction too when a Kpersistent is cached (ble.rdr.rke-neg-fast
    /// catches it: the phone's second round gets no AUTH1).
    public static let fastRKE = ReaderFaults(rawValue: 1 << 3)

    /// Send no reader certificate although one is configured (the rdr.cert.* checks catch it).
    public static let omitCertificate = ReaderFaults(rawValue: 1 << 4)

    public static let names: [(String, ReaderFaults)] = [
        ("accept-bad-device-signature", .acceptBadDeviceSignature), ("omit-le", .omitLe), ("ignore-rke", .ignoreRKE),
        ("fast-rke", .fastRKE), ("omit-certificate", .omitCertificate),
        ("skip-issuer-certificate-checks", .skipIssuerCertificateChecks), ("ignore-validity-iteration", .ignoreValidityIteration),
        ("revocation-append-as-overwrite", .revocationAppendAsOverwrite),
    ]
}
