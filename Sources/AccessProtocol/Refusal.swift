import OfflineUnlock

/// Why a transaction was refused, attributed to the layer that produced the reason: the engine
/// (documents, rules, clock), the protocol (what the credential sent), the transport (the link),
/// or the lock itself (its bolt, its storage). `code` is what outcomes and the audit log print.
public struct Refusal: Equatable, Sendable, Encodable {
    public enum Layer: String, Sendable, Encodable {
        case engine, `protocol`, transport, lock
    }
    public var layer: Layer
    public var code: String
    public var detail: String

    public init(layer: Layer, code: String, detail: String) {
        self.layer = layer
        self.code = code
        self.detail = detail
    }

    /// The engine's or the protocol's denial (both speak `DenyReason`).
    public init(_ layer: Layer, _ reason: DenyReason, detail: String) {
        self.init(layer: layer, code: reason.rawValue, detail: detail)
    }

    /// How a finished session's denial is attributed when the lock added nothing: the lock
    /// decided → engine; the link failed first → transport; else the protocol refused.
    static func attributing(_ result: TransactionResult) -> Refusal? {
        guard case .deny(let reason, let detail) = result.decision else { return nil }
        if result.decided { return Refusal(.engine, reason, detail: detail) }
        if detail.hasPrefix("transport:") { return Refusal(.transport, reason, detail: detail) }
        return Refusal(.protocol, reason, detail: detail)
    }
}
