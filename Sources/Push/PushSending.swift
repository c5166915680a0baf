import AsyncHTTPClient
import Foundation
import NIOCore

/// Where the trust service's pushes go: the relay in this process (scenarios, fleet, benches), or
/// a relay over HTTP in APNs's shape (`trust serve --push-relay URL`: `lockbench push serve`, or
/// any gateway that speaks `POST /3/device/{token}`).
public protocol PushSending: Sendable {
    /// Queues one message; answers the relay's id for it, or the relay's refusal.
    func send(_ message: PushMessage) async throws(PushRefusal) -> String
}

extension PushRelay: PushSending {}

/// A push sender that posts each message to `BASE/3/device/{token}` as a background APNs push
/// (`apns-push-type: background`, the data beside `aps`), and reads the answer as APNs words it:
/// 200 with `apns-id`; 410 = the token is dead; 413 = too large; anything else a refusal naming
/// the status and reason. The relay is never waited on for more than `timeout`. With a provider
/// key, every push carries `authorization: bearer PROVIDER-TOKEN` (`ProviderToken`).
public final class APNsHTTPSender: PushSending {
    public let baseURL: String
    private let http: HTTPClient
    private let timeout: TimeAmount
    private let provider: ProviderTokenSigner?

    public init(baseURL: String, http: HTTPClient = .shared, timeout: TimeAmount = .seconds(5), provider: ProviderTokenSigner? = nil) {
        self.baseURL = baseURL.hasSuffix("/") ? String(baseURL.dropLast()) : baseURL
        self.http = http
        self.timeout = timeout
        self.provider = provider
    }

    /// A token as one path segment: RFC 3986 `pchar` stays as it is (the relay matches the raw
    /// segment), everything else is percent-encoded.
    static let pathSegment = CharacterSet.urlPathAllowed.subtracting(CharacterSet(charactersIn: "/"))

    public func send(_ message: PushMessage) async throws(PushRefusal) -> String {
        var object: [String: Any] = message.data
        object["aps"] = ["content-available": 1]
        guard let body = try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]),
              let token = message.token.addingPercentEncoding(withAllowedCharacters: Self.pathSegment) else {
            throw .invalidArgument("the push for \(message.token) could not be encoded")
        }
        var request = HTTPClientRequest(url: baseURL + "/3/device/" + token)
        request.method = .POST
        request.headers.add(name: "content-type", value: "application/json")
        if let provider { request.headers.add(name: "authorization", value: "bearer " + (try provider.token())) }
        request.headers.add(name: "apns-push-type", value: message.background ? "background" : "alert")
        if let id = message.collapseID { request.headers.add(name: "apns-collapse-id", value: id) }
        if message.timeToLive == 0 { request.headers.add(name: "apns-expiration", value: "0") }
        request.body = .bytes(ByteBuffer(bytes: body))
        let status: Int, id: String?, answer: ByteBuffer
        do {
            let response = try await http.execute(request, timeout: timeout)
            status = Int(response.status.code)
            id = response.headers.first(name: "apns-id")
            answer = try await response.body.collect(upTo: 16 * 1024)
        } catch {
            throw .invalidArgument("the push relay at \(baseURL) did not answer: \(error)")
        }
        let reason = (try? JSONSerialization.jsonObject(with: Data(answer.readableBytesView)) as? [String: Any])?["reason"] as? String ?? ""
        switch status {
        case 200: return id ?? ""
        case 410: throw .unregistered(since: Date())
        case 413: throw .payloadTooLarge(message.payloadBytes)
        case 400 where reason == "BadDeviceToken": throw .badDeviceToken
        case 403 where reason == "MissingProviderToken": throw .missingProviderToken
        case 403 where reason == "ExpiredProviderToken": throw .expiredProviderToken
        case 403 where reason == "InvalidProviderToken": throw .invalidProviderToken("the relay at \(baseURL) does not accept this sender's provider key")
        case 429: throw .inboxFull("the relay at \(baseURL) answered 429 \(reason): the phone's inbox is full")
        default: throw .invalidArgument("the push relay at \(baseURL) answered \(status) \(reason)")
        }
    }
}
