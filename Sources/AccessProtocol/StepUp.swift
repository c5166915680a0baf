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

    public init(parsing bytes: [UInt8]) throws(CBORError) {
        let m = try CBOR.decode(bytes).asMap("DeviceRequest")
        version = try m.required("1", "DeviceRequest version").asText("DeviceRequest version")
        var types: [String] = []
        for item in try m.required("2", "DeviceRequest docRequests").asArray("DeviceRequest docRequests") {
            let request = try item.asMap("DocRequest")
            let items = try request.required("1", "DocRequest itemsRequest").embeddedItem().asMap("ItemsRequest")
            types.append(try items.required("5", "ItemsRequest docType").asText("ItemsRequest docType"))
        }
        docTypes = types
    }
}

/// The credential's answer inside ENVELOPE:
///
///     DeviceResponse = { "1": "1.0", "2": [ Document ], "3": status }
///
/// Each `Document` is carried as the credential holds it (CBOR, `"5"` = docType); the reader
/// sorts them into access and revocation documents and hands them to the engine unchanged.
public struct DeviceResponse: Equatable, Sendable {
    public var version: String
    /// Each Document, CBOR-encoded.
    public var documents: [[UInt8]]
    public var status: Int

    public init(version: String = "1.0", documents: [[UInt8]], status: Int = 0) {
        self.version = version
        self.documents = documents
        self.status = status
    }

    public func encoded() throws(CBORError) -> [UInt8] {
        var docs: [CBOR] = []
        for d in documents { docs.append(try CBOR.decode(d)) }
        return CBOR.map(["1": .text(version), "2": .array(docs), "3": .int(status)]).encoded()
    }

    public init(parsing bytes: [UInt8]) throws(CBORError) {
        let m = try CBOR.decode(bytes).asMap("DeviceResponse")
        version = try m.required("1", "DeviceResponse version").asText("DeviceResponse version")
        status = try m.required("3", "DeviceResponse status").asInt("DeviceResponse status")
        documents = try (m["2"]?.asArray("DeviceResponse documents") ?? []).map { $0.encoded() }
    }

    /// The docType (`"5"`) of an encoded Document, nil when it has none.
    public static func docType(of document: [UInt8]) -> String? {
        (try? CBOR.decode(document))?.mapValue?["5"]?.textValue
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
        let tlv = try TLV.parse(data)
        guard tlv.tag == Tag.Envelope.data else { throw TLVError(.unexpectedTag, "ENVELOPE data is not a 53 TLV") }
        return try CBOR.decode(tlv.value).asMap("envelope").required("data", "envelope data").asBytes("envelope data")
    }
}
