import ByteCore
import Codecs
import OfflineUnlock

/// Document types carried in step-up.
public enum DocType {
    /// Access document.
    public static let access = "aliro-a"
    /// Revocation document.
    public static let revocation = "aliro-r"
    /// The element of an access document that holds its access data.
    public static let accessElement = AccessDocument.elementIdentifier
    /// The element of a revocation document that holds its entries.
    public static let revocationElement = RevocationDocument.elementIdentifier
}

/// The step-up request the reader sends inside ENVELOPE (CBOR, ISO 18013-5 shape):
///
///     DeviceRequest = { "1": "1.0", "2": [ DocRequest ] }
///     DocRequest    = { "1": #6.24(bstr .cbor ItemsRequest) }
///     ItemsRequest  = { "1": { namespace => { elementID => intentToRetain } }, "5": docType }
///
/// LockBench asks for each docType in the namespace of the same name and names the element it
/// needs (`access` of "aliro-a", `revocation` of "aliro-r"), intent to retain false: the official
/// step-up reader cases (`nfc_rdr_stepup_ad_*`) fail a request that names no element ("Reader did
/// not request Element ID"), as the tool's reader builds `{"aliro-a": {"floor1": false}}`.
public struct DeviceRequest: Equatable, Sendable {
    /// One DocRequest: a docType, and per namespace the element identifiers asked for.
    public struct Items: Equatable, Sendable {
        public var docType: String
        /// namespace → element identifier → intent to retain.
        public var namespaces: [String: [String: Bool]]

        public init(docType: String, namespaces: [String: [String: Bool]]) {
            self.docType = docType
            self.namespaces = namespaces
        }

        /// The element identifiers asked for in every namespace.
        public var elements: [String] { namespaces.values.flatMap(\.keys).sorted() }
    }

    public var version: String
    public var requests: [Items]
    public var docTypes: [String] { requests.map(\.docType) }

    public init(version: String = "1.0", requests: [Items]) {
        self.version = version
        self.requests = requests
    }

    /// Whole documents of these types: each in its own namespace, naming no element (the request
    /// LockBench sent before 2026-11-26; kept for conformance probes of tolerant phones).
    public init(version: String = "1.0", docTypes: [String]) {
        self.init(version: version, requests: docTypes.map { Items(docType: $0, namespaces: [$0: [:]]) })
    }

    /// Access and revocation documents, each naming the element the lock reads: what a LockBench
    /// reader asks for.
    public static let standard = DeviceRequest(requests: [
        Items(docType: DocType.access, namespaces: [DocType.access: [DocType.accessElement: false]]),
        Items(docType: DocType.revocation, namespaces: [DocType.revocation: [DocType.revocationElement: false]]),
    ])

    public func cbor() -> CBOR {
        .map(["1": .text(version), "2": .array(requests.map { r in
            let namespaces = CBOR.map(Dictionary(uniqueKeysWithValues: r.namespaces.map { ns, elements in
                (CBOR.text(ns), CBOR.map(Dictionary(uniqueKeysWithValues: elements.map { (CBOR.text($0.key), CBOR.bool($0.value)) })))
            }))
            return .map(["1": CBOR.embedded(.map(["1": namespaces, "5": .text(r.docType)]))])
        })])
    }

    public func encoded() -> [UInt8] { cbor().encoded() }

    /// Keys in either spelling (`"1"` or `1`); unknown keys are skipped; a namespace map that is
    /// absent or not a map of maps reads as no element named.
    public init(parsing bytes: [UInt8]) throws(CBORError) {
        let m = try CBOR(parsing: bytes).asMap("DeviceRequest")
        version = try m.numbered(1)?.asText("DeviceRequest version") ?? "1.0"
        var out: [Items] = []
        for item in try m.requiredNumbered(2, "DeviceRequest docRequests").asArray("DeviceRequest docRequests") {
            let request = try item.asMap("DocRequest")
            let items = try request.requiredNumbered(1, "DocRequest itemsRequest").embeddedItem().asMap("ItemsRequest")
            var namespaces: [String: [String: Bool]] = [:]
            if case .map(let ns)? = items.numbered(1) {
                for (key, value) in ns {
                    guard case .text(let name) = key, case .map(let elements) = value else { continue }
                    var named: [String: Bool] = [:]
                    for (k, v) in elements { if case .text(let id) = k { named[id] = (v == .bool(true)) } }
                    namespaces[name] = named
                }
            }
            out.append(Items(docType: try items.requiredNumbered(5, "ItemsRequest docType").asText("ItemsRequest docType"),
                             namespaces: namespaces))
        }
        requests = out
    }
}

/// The credential's answer inside ENVELOPE:
///
///     DeviceResponse = { "1": "1.0", "2": [ Document ], "3": status }
///
/// Each `Document` travels **verbatim**: the credential splices the bytes it holds into the array
/// and the reader keeps the bytes of each array item exactly as they arrived (digests and the
/// issuer's signature are over those bytes; a re-encoding would also lose integer map keys or
/// another encoder's key order). Keys are read in either spelling (`"1"` or `1`); only `"2"` is
/// needed to verify anything, so `"1"` and `"3"` may be absent and unknown keys are skipped.
public struct DeviceResponse: Equatable, Sendable {
    public var version: String
    /// Each Document, as its bytes.
    public var documents: [[UInt8]]
    public var status: Int

    public init(version: String = "1.0", documents: [[UInt8]], status: Int = 0) {
        self.version = version
        self.documents = documents
        self.status = status
    }

    /// Deterministic map `{"1": version, "2": [documents…], "3": status}` with each document's
    /// bytes copied in unchanged; a document that is not one well-formed CBOR item is refused.
    public func encoded() throws(CBORError) -> [UInt8] {
        var out = CBOR.mapHead(3)
        out += CBOR.text("1").encoded() + CBOR.text(version).encoded()
        out += CBOR.text("2").encoded() + CBOR.arrayHead(documents.count)
        for d in documents {
            _ = try CBOR(parsing: d)
            out += d
        }
        out += CBOR.text("3").encoded() + CBOR.int(status).encoded()
        return out
    }

    public init(parsing bytes: [UInt8]) throws(CBORError) {
        var version = "1.0", status = 0, documents: [[UInt8]] = []
        for entry in try CBOR.rawMapEntries(bytes) {
            switch entry.key {
            case .text("1"), .unsigned(1): version = try entry.value.asText("DeviceResponse version")
            case .text("3"), .unsigned(3): status = try entry.value.asInt("DeviceResponse status")
            case .text("2"), .unsigned(2):
                _ = try entry.value.asArray("DeviceResponse documents")
                documents = try CBOR.rawArrayItems(entry.raw)
            default: continue
            }
        }
        self.version = version
        self.status = status
        self.documents = documents
    }

    /// The docType (`"5"` or `5`) of an encoded Document, nil when it has none.
    public static func docType(of document: [UInt8]) -> String? {
        (try? CBOR(parsing: document))?.mapValue?.numbered(5)?.textValue
    }

    public var accessDocuments: [[UInt8]] { documents.filter { DeviceResponse.docType(of: $0) == DocType.access } }
    public var revocationDocuments: [[UInt8]] { documents.filter { DeviceResponse.docType(of: $0) == DocType.revocation } }
}

/// ENVELOPE payload: `53 L CBOR{"data": bstr(GCM ciphertext ‖ tag)}` in both directions.
public enum StepUpEnvelope {
    /// The CBOR map `{"data": sealed}` (the caller adds the `53` TLV).
    public static func wrap(_ sealed: [UInt8]) -> [UInt8] {
        CBOR.map(["data": .bytes(sealed)]).encoded()
    }

    /// The response form: `53 L {"data": sealed}`.
    public static func wrapResponse(_ sealed: [UInt8]) -> [UInt8] {
        TLV(Tag.Envelope.data, wrap(sealed)).encoded()
    }

    /// Sealed bytes out of `53 L {"data": …}`.
    public static func unwrap(_ data: [UInt8]) throws -> [UInt8] {
        let tlv = try TLV(parsing: data)
        guard tlv.tag == Tag.Envelope.data else { throw TLVError(.unexpectedTag, "ENVELOPE data is not a 53 TLV") }
        return try CBOR(parsing: tlv.value).asMap("envelope").required("data", "envelope data").asBytes("envelope data")
    }
}
