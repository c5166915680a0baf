// libFuzzer entry for the issuer certificate reader (x5chain of an access document's issuerAuth).
// Compiled into module `Codecs` by Tests/Fuzz/fuzz.sh. Every input goes through the bounded DER
// reader and `IssuerCertificate`; an accepted certificate's key is a P-256 point and the
// signature check runs (it must not verify under a fixed key that signed none of the seeds).

import ByteCore

private let fuzzCAKey: [UInt8] = Array(Hex.decode("04b9ee8fe209c1c5865750a2d8056fde0c108a8045d9f142f1e1f69b294490df1b349280f603b1b63795e40bc7342e2703a17bdb1acb821f6bc143e546b3b3ac7f")!)

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzX509(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    _ = try? DER.elements(bytes[...])
    if let certificate = try? IssuerCertificate(parsing: bytes) {
        guard certificate.publicKey.count == 65, certificate.publicKey.first == 0x04 else { fatalError("an accepted key is not a point") }
        _ = certificate.isSigned(by: fuzzCAKey)
        _ = certificate.isValid(at: certificate.notBefore)
    }
    return 0
}
