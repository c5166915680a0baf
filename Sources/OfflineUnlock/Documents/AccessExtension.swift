import Codecs

/// One access extension of an access document (AccessData key 6, ALIRO-FACTS "Step-up"): an
/// issuer's addition to the access rules, identified by number and version. A reader that does
/// not understand a **critical** extension must refuse the document (it could narrow the access
/// the rules grant); one it does not understand and that is not critical is skipped. LockBench
/// understands no extension, so a document with a critical one is refused (`unsupported_version`,
/// NFC_RDR_NEG_STEPUP_AD_UNKNOWN_CRITICAL_ACCESS_EXTENSION).
///
/// ```cddl
/// AccessExtensions = { + uint => [ + AccessExtension ] }   ; extension id => its entries
/// AccessExtension = {
///   0: uint,        ; extension id (the key it is filed under)
///   1: uint,        ; extension version
///   2: bool,        ; critical
///   ? 3: any        ; extension data (not read)
/// }
/// ```
/// ALIRO-FACTS names key 6 only; the fields are those the official case's `AccessExtension`
/// carries (id, version, is_critical, data), numbered in that order — LockBench's choice. An
/// entry that does not decode as above is taken as critical: what the lock cannot read, it must
/// not skip.
public struct AccessExtension: Equatable, Sendable {
    public var id: UInt64
    public var version: UInt64
    public var critical: Bool
    public var data: CBOR?

    public init(id: UInt64, version: UInt64, critical: Bool, data: CBOR? = nil) {
        self.id = id; self.version = version; self.critical = critical; self.data = data
    }

    public var cbor: CBOR {
        var m: [CBOR: CBOR] = [0: .unsigned(id), 1: .unsigned(version), 2: .bool(critical)]
        if let data { m[3] = data }
        return .map(m)
    }

    /// Reads one entry filed under `key`; an unreadable entry is a critical extension of that id.
    init(cbor: CBOR, filedUnder key: UInt64) {
        guard let m = cbor.mapValue, let id = m.numbered(0)?.uint64Value, let version = m.numbered(1)?.uint64Value,
              let critical = m.numbered(2)?.boolValue else {
            self.init(id: key, version: 0, critical: true, data: cbor)
            return
        }
        self.init(id: id, version: version, critical: critical, data: m.numbered(3))
    }

    /// The AccessData key 6 value for `extensions`, filed by id.
    static func cbor(_ extensions: [AccessExtension]) -> CBOR {
        var byID: [CBOR: [CBOR]] = [:]
        for e in extensions { byID[.unsigned(e.id), default: []].append(e.cbor) }
        return .map(byID.mapValues { .array($0) })
    }

    /// Every entry of an AccessData key 6 value. A value that is not the map above is one
    /// unreadable, hence critical, extension.
    static func entries(_ value: CBOR) -> [AccessExtension] {
        guard let m = value.mapValue else { return [AccessExtension(id: 0, version: 0, critical: true, data: value)] }
        var out = [AccessExtension]()
        for (k, v) in m {
            let key = k.uint64Value ?? 0
            guard let list = v.arrayValue else { out.append(AccessExtension(id: key, version: 0, critical: true, data: v)); continue }
            out += list.map { AccessExtension(cbor: $0, filedUnder: key) }
        }
        return out.sorted { ($0.id, $0.version) < ($1.id, $1.version) }
    }

    /// `1 (version 1, critical)`.
    public var description: String { "\(id) (version \(version)\(critical ? ", critical" : ""))" }
}
