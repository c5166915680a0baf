import ArgumentParser
import HTTPServing
import LockRuntime

/// `--tls-certificate` and `--tls-key` of the serve commands: HTTPS with a certificate chain and
/// key of the operator's (PEM files; the key readable by its owner only).
struct TLSOptions: ParsableArguments {
    @Option(name: .customLong("tls-certificate"), help: ArgumentHelp("Serve HTTPS with this certificate chain (PEM); needs --tls-key.", valueName: "file"))
    var certificate: String?
    @Option(name: .customLong("tls-key"), help: ArgumentHelp("The certificate's private key (PEM, mode 0600).", valueName: "file"))
    var key: String?

    func validate() throws {
        guard (certificate == nil) == (key == nil) else { throw ValidationError("--tls-certificate and --tls-key go together") }
    }

    var files: TLSFiles? { certificate.flatMap { c in key.map { TLSFiles(certificateChain: c, privateKey: $0) } } }

    /// Says once, on stderr, when the server is reachable beyond this machine and speaks plain HTTP.
    func warnIfExposed(host: String, what: String) {
        guard files == nil, !isLoopback(host) else { return }
        emitError("warning: \(what) listens on \(host) without TLS: bearer tokens and keys cross the network in clear; give --tls-certificate and --tls-key, or listen on 127.0.0.1 behind a TLS proxy")
    }
}
