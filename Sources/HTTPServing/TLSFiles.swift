import Foundation
import NIOSSL

/// A certificate chain and its private key, PEM files, for serving HTTPS (`--tls-certificate`,
/// `--tls-key`). The key file must be readable by its owner only, as every key LockBench reads.
public struct TLSFiles: Sendable, Equatable {
    public var certificateChain: String
    public var privateKey: String

    public init(certificateChain: String, privateKey: String) {
        self.certificateChain = certificateChain
        self.privateKey = privateKey
    }

    /// The server's TLS configuration (TLS 1.2 or later), or why the files cannot serve it, naming
    /// the file.
    public func configuration() throws(HTTPServingError) -> TLSConfiguration {
        var st = stat()
        guard stat(privateKey, &st) == 0 else { throw HTTPServingError("--tls-key \(privateKey): no such file") }
        guard st.st_mode & 0o077 == 0 else {
            throw HTTPServingError("--tls-key \(privateKey) is accessible by others (mode \(String(st.st_mode & 0o777, radix: 8))); it must be readable by its owner only: chmod 600 \(privateKey)")
        }
        let chain: [NIOSSLCertificate]
        do { chain = try NIOSSLCertificate.fromPEMFile(certificateChain) } catch {
            throw HTTPServingError("--tls-certificate \(certificateChain) is not a PEM certificate chain: \(error)")
        }
        guard !chain.isEmpty else { throw HTTPServingError("--tls-certificate \(certificateChain) holds no certificate") }
        let key: NIOSSLPrivateKey
        do { key = try NIOSSLPrivateKey(file: privateKey, format: .pem) } catch {
            throw HTTPServingError("--tls-key \(privateKey) is not a PEM private key: \(error)")
        }
        var tls = TLSConfiguration.makeServerConfiguration(certificateChain: chain.map { .certificate($0) }, privateKey: .privateKey(key))
        tls.minimumTLSVersion = .tlsv12
        return tls
    }
}

/// Why a server could not be set up: a sentence naming the option or file.
public struct HTTPServingError: Error, CustomStringConvertible, Sendable {
    public var description: String
    /// The machine failed (a port in use), not the input: exit 3 rather than 2.
    public var environment: Bool
    public init(_ description: String, environment: Bool = false) { self.description = description; self.environment = environment }
}

/// Whether `host` is only reachable from this machine.
public func isLoopback(_ host: String) -> Bool {
    host == "localhost" || host == "::1" || host.hasPrefix("127.")
}
