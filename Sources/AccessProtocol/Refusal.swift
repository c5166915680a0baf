import OfflineUnlock

/// A reason of the lock itself (its bolt, its storage): the Lock module's `LockReason`. The
/// protocol carries it to the outcome without knowing its cases.
public protocol LockRefusalReason: Sendable, CustomStringConvertible {
    /// The stable wire code (`jammed`, `storage_failure`).
    var code: String { get }
}

extension LockRefusalReason {
    public var description: String { code }
}

/// Why a transaction was refused, as the reason of the layer that produced it: the engine
/// (documents, rules, clock), the protocol (what the credential sent), the transport (the link)
/// or the lock itself (its bolt, its storage). `code` is what outcomes, `--json`, the audit log
/// and exit messages print; `detail` says in words what exactly failed.
public struct Refusal: Equatable, Sendable, Encodable, CustomStringConvertible {
    public enum Reason: Equatable, Sendable, CustomStringConvertible {
        case engine(DenyReason)
        case `protocol`(ProtocolFailure)
        case transport(TransportFailure)
        case lock(any LockRefusalReason)

        public var layer: Layer {
            switch self {
            case .engine: return .engine
            case .protocol: return .protocol
            case .transport: return .transport
            case .lock: return .lock
            }
        }

        /// The layer's stable wire code.
        public var code: String {
            switch self {
            case .engine(let r): return r.rawValue
            case .protocol(let r): return r.rawValue
            case .transport(let r): return r.rawValue
            case .lock(let r): return r.code
            }
        }

        public var description: String { "\(layer.rawValue) \(code)" }

        public static func == (a: Reason, b: Reason) -> Bool { a.layer == b.layer && a.code == b.code }
    }

    public enum Layer: String, Sendable, Encodable, CaseIterable {
        case engine, `protocol`, transport, lock
    }

    public var reason: Reason
    public var detail: String

    public init(_ reason: Reason, detail: String) {
        self.reason = reason
        self.detail = detail
    }

    public var layer: Layer { reason.layer }
    public var code: String { reason.code }
    public var description: String { "\(code) (\(layer.rawValue)): \(detail)" }

    enum CodingKeys: String, CodingKey { case layer, code, detail }
    public func encode(to encoder: Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(layer, forKey: .layer)
        try c.encode(code, forKey: .code)
        try c.encode(detail, forKey: .detail)
    }
}

/// What a transaction came to: a grant of an access document, or a refusal by one layer.
public enum TransactionDecision: Equatable, Sendable, CustomStringConvertible {
    /// `credentialID` is the access document's id (hex).
    case grant(credentialID: String)
    case deny(Refusal)

    /// The engine's decision as a transaction's.
    public init(_ engine: Decision) {
        switch engine {
        case .grant(let id): self = .grant(credentialID: id)
        case .deny(let reason, let detail): self = .deny(Refusal(.engine(reason), detail: detail))
        }
    }

    public var isGrant: Bool { if case .grant = self { return true } else { return false } }
    public var refusal: Refusal? { if case .deny(let r) = self { return r } else { return nil } }
    /// The layered reason of a denial.
    public var reason: Refusal.Reason? { refusal?.reason }

    public var description: String {
        switch self {
        case .grant(let id): return "grant \(id)"
        case .deny(let r): return "deny \(r)"
        }
    }
}
