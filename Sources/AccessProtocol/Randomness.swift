import ByteCore
import Codecs
import Crypto
import Synchronization

/// Where a session gets its random bytes (ephemeral keys, transaction ids, decoy cryptograms).
/// Injectable so test vectors are reproducible. Sendable: a session may draw on any thread.
public protocol RandomSource: AnyObject, Sendable {
    func bytes(_ count: Int) -> [UInt8]
}

/// The system's CSPRNG (`Primitives.randomBytes`).
public final class SystemRandom: RandomSource {
    public init() {}
    public func bytes(_ count: Int) -> [UInt8] { Primitives.randomBytes(count) }
}

/// A deterministic stream for test vectors: block i = SHA-256(seed ‖ i as 4-byte big-endian),
/// blocks concatenated, read front to back. Never use outside tests and vectors.
public final class SeededRandom: RandomSource {
    private struct Stream {
        var counter: UInt32 = 0
        var buffer: [UInt8] = []
    }
    private let seed: [UInt8]
    private let stream = Mutex(Stream())

    public init(seed: [UInt8]) { self.seed = seed }
    public convenience init(_ text: String) { self.init(seed: Array(text.utf8)) }

    public func bytes(_ count: Int) -> [UInt8] {
        stream.withLock { s in
            while s.buffer.count < count {
                var block = seed
                block.appendUInt32BE(s.counter)
                s.buffer += Array(SHA256.hash(data: block))
                s.counter += 1
            }
            let out = Array(s.buffer.prefix(count))
            s.buffer.removeFirst(count)
            return out
        }
    }
}

extension RandomSource {
    /// A P-256 key-agreement key whose scalar is the next 32 bytes that form a valid scalar
    /// (bytes outside 1…n-1 are skipped, as `rawRepresentation` rejects them).
    func ephemeralKey() -> P256.KeyAgreement.PrivateKey {
        while true {
            if let key = try? P256.KeyAgreement.PrivateKey(rawRepresentation: bytes(32)) { return key }
        }
    }
}

/// A reader ephemeral key made ahead of its transaction: generating the key and encoding its
/// point cost a scalar multiplication and a field inversion that need not wait for a card. The
/// lock makes the next one after each transaction (`LockReader.prepareEphemeralKey`); each is
/// used by one session only.
public struct PreparedEphemeralKey: Sendable {
    public let key: P256.KeyAgreement.PrivateKey
    /// `04‖X‖Y`.
    public let publicBytes: [UInt8]

    public init(random: RandomSource) {
        key = random.ephemeralKey()
        publicBytes = key.publicBytes
    }
}
