import ByteCore
import Codecs

/// Document types carried in step-up.
public enum DocType {
    /// Access document.
    public static let access = "aliro-a"
    /// Revocation document.
    public static let revocation = "aliro-r"
}

/// The step-up request the reader sends inside ENVELOPE (CBOR, ISO 18013-5 shape):
///
///     DeviceRequest = { "1": "1.0", "2": [ DocRequest ] }
///     DocRequest    = { "1": #6.24(bstr .cbor ItemsRequest) }
///     ItemsRequest  = { "1": { namespace => { elementID => intentToRetain } }, "5": docType }
///
/// LockBench asks for whole documents: one DocRequest per docType, namespace = docType, and an
/// empty element map (= every element).
public struct DeviceRequest: Equatable, Sendable {
    public var version: String
    public var docTypes: [String]

    public init(version: String = "1.0", docTypes: [String]) {
        self.version = version
        self.docTypes = docTypes
    }

    /// Access and revocation documents: what a LockBench reader asks for.
    public static let standard = DeviceRequest(docTypes: [DocType.access, DocType.revocation])

    public func cbor() -> CBOR {
        .map(["1": .text(version), "2": .array(docTypes.map { type in
            .map(["1": CBOR.embedded(.map(["1": .map([.text(type): .map([:])]), "5": .text(type)]))])
        })])
    }

    public func encoded() -> [UInt8] { cbor().encoded() }

    /// Keys in either spelling (`"1"` or `1`); unknown keys are skipped.
    public init(parsing bytes: [UInt8]) throws(CBORError) {
        let m = try CBOR(parsing: bytes).asMap("DeviceRequest")
        version = try m.numbered(1)?.asText("DeviceRequest version") ?? "1.0"
        var types: [String] = []
        for item in try m.requiredNumbered(2, "DeviceRequest docRequests").asArray("DeviceRequest docRequests") {
            let request = try item.asMap("DocRequest")
            let items = try request.requiredNumbered(1, "DocRequest itemsRequest").embeddedItem().asMap("ItemsRequest")
            types.append(try items.requiredNumbered(5, "ItemsRequest docType").asText("ItemsRequest docType"))
        }
        docTypes = types
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
