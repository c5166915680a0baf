import ByteCore
import Codecs

/// Credential public keys a lock trusts without a document, provisioned out of band (Aliro lets a
/// reader hold credential keys directly; the official NFC_RDR_STEPUP_RD grants two such phones on
/// AUTH1 alone). The lock configuration's `trustedCredentialKeys` file:
///
/// ```
/// # one key per line: the 65-byte uncompressed P-256 point, hex (04 ‖ X ‖ Y); '#' starts a comment
/// 0400ADBB74BBBB7E06B0A28C7D049B023796CD0F7CB9E279EC42ECFE6E415842451EB93AC5BF62D25CC1DAEA898A82B18BD813A061E21CB58B3CA93DA6DC7EC300
/// ```
/// Bounded: at most `maxKeys` keys in at most `maxBytes` bytes; every key is checked on the curve.
/// A refusal names the line and the rule.
public struct CredentialKeyList: Equatable, Sendable {
    public static let maxKeys = 1024
    public static let maxBytes = 256 * 1024
    public private(set) var keys: [[UInt8]] = []

    public init() {}

    public init(keys: [[UInt8]]) throws(Refusal) {
        for (i, k) in keys.enumerated() { try add(k, line: i + 1) }
    }

    public init(parsing text: String) throws(Refusal) {
        guard text.utf8.count <= Self.maxBytes else {
            throw Refusal(line: nil, "the file holds \(text.utf8.count) bytes; at most \(Self.maxBytes)")
        }
        for (i, raw) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = raw.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false).first.map(String.init) ?? ""
            let hex = line.filter { !$0.isWhitespace }
            guard !hex.isEmpty else { continue }
            guard let bytes = Hex.decode(hex) else { throw Refusal(line: i + 1, "not hex") }
            try add(bytes, line: i + 1)
        }
    }

    private mutating func add(_ key: [UInt8], line: Int) throws(Refusal) {
        guard keys.count < Self.maxKeys else { throw Refusal(line: line, "more than \(Self.maxKeys) keys") }
        guard key.count == 65, key.first == 0x04 else {
            throw Refusal(line: line, "\(key.count) bytes starting \(key.first.map { Hex.encode([$0]) } ?? "nothing"); a key is 65 bytes, 04 ‖ X ‖ Y")
        }
        // The length and prefix are checked above: what is left is the curve equation.
        do { _ = try Primitives.signingPublicKey(key) } catch { throw Refusal(line: line, "X, Y is not a point on P-256 (the curve equation does not hold)") }
        if !keys.contains(key) { keys.append(key) }
    }

    public func contains(_ key: [UInt8]) -> Bool { keys.contains(key) }

    /// The file text, one key per line.
    public func encoded() -> String { keys.map { Hex.encode($0) + "\n" }.joined() }

    /// How the audit log names a credential granted by this list: its key hash, as revocation
    /// entries name it (SHA-256 of the 65-byte key), first 8 bytes.
    public static func credentialID(_ key: [UInt8]) -> String { "trusted-key:" + Hex.encode(Array(Primitives.sha256(key).prefix(8))) }

    public struct Refusal: Error, CustomStringConvertible, Sendable, Equatable {
        public var line: Int?
        public var message: String
        init(line: Int?, _ message: String) { self.line = line; self.message = message }
        public var description: String { (line.map { "line \($0): " } ?? "") + message }
    }
}
