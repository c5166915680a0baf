// libFuzzer entry for reader certificates (`ReaderCertificate`, Sources/Codecs/Certificate), the
// bytes a phone takes from LOAD CERT or AUTH1 90 and a lock from its configuration.
// Compiled into module `Codecs` by Tests/Fuzz/fuzz.sh.
// Properties: no crash; a compressed certificate that parses re-compresses to a form that parses
// equal, rebuilds an X.509 that parses back equal, and verifies under no key but by chance
// (a fixed CA key: mutations never carry its signature); an X.509 input that parses rebuilds to
// its own bytes.

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzReaderCertificate(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    if let cert = try? ReaderCertificate(parsingCompressed: bytes) {
        guard let again = try? ReaderCertificate(parsingCompressed: cert.compressed()), again == cert else {
            fatalError("a compressed certificate does not re-compress to itself")
        }
        let ca = [0x04] + [UInt8](repeating: 0x5A, count: 64)   // not a point: verification must say no, not trap
        if cert.isSigned(by: ca) { fatalError("verified under a key that is not a point") }
        _ = cert.validity
        let x509 = cert.x509(issuerPublicKey: ca)
        if let parsed = try? ReaderCertificate(parsingX509: x509), parsed != cert {
            fatalError("the rebuilt X.509 parses to another certificate")
        }
    }
    if let cert = try? ReaderCertificate(parsingX509: bytes) {
        _ = cert.compressed()
        guard (try? ReaderCertificate(parsingCompressed: cert.compressed())) == cert else {
            fatalError("an X.509 certificate does not survive compression")
        }
    }
    return 0
}
