import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1

/// A phone's end of `lockbench push serve` over HTTP (`phone run --push-relay URL`): the token
/// opened at the relay (`POST /lockbench/devices/TOKEN`), then pushes collected by long polls of
/// its inbox — what the OS's push channel is to a real phone.
public final class RelayInbox: Sendable {
    public let baseURL: String
    public let token: String
    /// The phone's own secret for its inbox: the relay keeps its hash at the first open and wants it
    /// for every later use of the inbox (the token itself is known to everyone who pushes).
    public let secret: String
    private let http: HTTPClient

    public init(baseURL: String, token: String, secret: String = RelayInbox.newSecret(), http: HTTPClient = .shared) {
        self.baseURL = baseURL.hasSuffix("/") ? String(baseURL.dropLast()) : baseURL
        self.token = token
        self.secret = secret
        self.http = http
    }

    /// 32 random bytes, hex.
    public static func newSecret() -> String {
        (0..<32).map { _ in String(format: "%02x", UInt8.random(in: 0...255)) }.joined()
    }

    /// A fresh token for a device: what APNs/FCM hand an app (printable, unique per install).
    public static func newToken(device: String) -> String {
        "lockbench-" + device + "-" + (0..<8).map { _ in String(format: "%02x", UInt8.random(in: 0...255)) }.joined()
    }

    /// Opens the token at the relay, or changes what the app is doing (`background`, `foreground`,
    /// `force-quit`: the OS then discards background pushes).
    public func open(state: String = "background") async throws(TrustClientError) {
        var request = HTTPClientRequest(url: baseURL + "/lockbench/devices/" + token + "?state=" + state)
        request.method = .POST
        let (status, body) = try await send(request, timeout: .seconds(10))
        guard status == 204 else { throw .protocolError("the push relay refused the token (HTTP \(status)): \(String(decoding: body, as: UTF8.self))") }
    }

    /// Retires the token at the relay (it answers 410 for it from then on).
    public func close() async throws(TrustClientError) {
        var request = HTTPClientRequest(url: baseURL + "/lockbench/devices/" + token)
        request.method = .DELETE
        _ = try await send(request, timeout: .seconds(10))
    }

    /// A mobile wake-up request for this device: `PUT` (subscribe, `mode` noData, value or
    /// childEvent) or `DELETE` (unsubscribe) `/base/APP/.wakeup/PATH?id=TOKEN`. Answers the status
    /// and the relay's body (204 and empty on success; 403/404 with the tutorial's `status`).
    public func wakeUp(_ method: HTTPMethod, app: String, path: String, mode: String? = nil) async throws(TrustClientError) -> (Int, String) {
        let trimmed = path.hasPrefix("/") ? String(path.dropFirst()) : path
        var allowed = CharacterSet.urlPathAllowed
        allowed.remove(charactersIn: "?#")
        var url = baseURL + "/base/" + app + "/.wakeup/" + (trimmed.addingPercentEncoding(withAllowedCharacters: allowed) ?? trimmed) + "?id=" + token
        if let mode { url += "&mode=" + mode }
        var request = HTTPClientRequest(url: url)
        request.method = method
        let (status, body) = try await send(request, timeout: .seconds(10))
        return (status, String(decoding: body, as: UTF8.self))
    }

    /// The pushes that arrived, waiting up to `wait` seconds (≤ 30) for the first.
    public func collect(wait: Int) async throws(TrustClientError) -> [[String: String]] {
        let w = min(30, max(0, wait))
        let (status, body) = try await send(HTTPClientRequest(url: baseURL + "/lockbench/devices/\(token)/inbox?wait=\(w)"),
                                            timeout: .seconds(Int64(w) + 10))
        guard status == 200 else { throw .protocolError("the push relay's inbox answered HTTP \(status)") }
        guard let messages = try? JSONDecoder().decode([[String: String]].self, from: body) else {
            throw .protocolError("the push relay's inbox does not decode")
        }
        return messages
    }

    private func send(_ request: HTTPClientRequest, timeout: TimeAmount) async throws(TrustClientError) -> (Int, Data) {
        var request = request
        request.headers.replaceOrAdd(name: "Authorization", value: "Bearer " + secret)
        return try await TrustClient.send(request, http: http, timeout: timeout, naming: baseURL)
    }
}
