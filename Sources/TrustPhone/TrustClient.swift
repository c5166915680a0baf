import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import TrustModel

/// Why a request to the trust service failed, as the phone sees it.
public enum TrustClientError: Error, Equatable, CustomStringConvertible, Sendable {
    /// No answer: the phone is offline or the service is down.
    case network(String)
    /// The token endpoint refused (RFC 6749 §5.2 `error`, `error_description`).
    case oauth(code: String, description: String)
    /// The poll endpoint refused the access token (401).
    case unauthorized(String)
    /// Anything else the phone did not expect.
    case protocolError(String)
    /// An API call refused with `{"error", "error_description"}` (push approval).
    case refused(status: Int, code: String, description: String)

    public var description: String {
        switch self {
        case .network(let m): return "network: \(m)"
        case .oauth(let c, let d): return "\(c): \(d)"
        case .unauthorized(let m): return "unauthorized: \(m)"
        case .protocolError(let m): return "protocol: \(m)"
        case .refused(let status, let c, let d): return "\(c) (HTTP \(status)): \(d)"
        }
    }
}

/// The phone's side of the HTTP API over async-http-client: any OAuth client would do the same.
public final class TrustClient: Sendable {
    public let baseURL: String
    let http: HTTPClient
    let ownsClient: Bool
    public let timeout: TimeAmount

    /// `retryConnecting: false` makes a refused connection fail the request at once instead of
    /// retrying until the timeout (a phone started against a service that is down says so at once).
    public init(baseURL: String, http: HTTPClient? = nil, timeout: TimeAmount = .seconds(10), retryConnecting: Bool = true) {
        self.baseURL = baseURL.hasSuffix("/") ? String(baseURL.dropLast()) : baseURL
        var configuration = HTTPClient.Configuration()
        configuration.connectionPool.retryConnectionEstablishment = retryConnecting
        self.http = http ?? HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
        ownsClient = http == nil
        self.timeout = timeout
    }

    public func shutdown() async {
        if ownsClient { try? await http.shutdown() }
    }

    /// `POST /v1/token` with a form body.
    public func token(_ form: [(String, String)]) async throws(TrustClientError) -> TokenResponse {
        let (status, body) = try await postForm("/v1/token", form)
        if status == 200 {
            guard let r = try? JSONDecoder().decode(TokenResponse.self, from: body) else {
                throw .protocolError("the token answer is not RFC 6749 JSON")
            }
            return r
        }
        throw Self.oauthRefusal(status, body)
    }

    /// `POST /v1/device_authorization` (RFC 8628 §3.1): a code pair for this device.
    public func deviceAuthorization(device: String) async throws(TrustClientError) -> DeviceAuthorizationResponse {
        let (status, body) = try await postForm("/v1/device_authorization", [("client_id", device)])
        if status == 200 {
            guard let r = try? JSONDecoder().decode(DeviceAuthorizationResponse.self, from: body) else {
                throw .protocolError("the device authorization answer is not RFC 8628 JSON")
            }
            return r
        }
        throw Self.oauthRefusal(status, body)
    }

    /// `POST /v1/revoke` (RFC 7009): ends the login behind `token`.
    public func revoke(_ token: String, hint: String) async throws(TrustClientError) {
        let (status, body) = try await postForm("/v1/revoke", [("token", token), ("token_type_hint", hint)])
        guard status == 200 else { throw Self.oauthRefusal(status, body) }
    }

    /// `GET /v1/keys?since=` with the access token; nil on 204 (nothing changed).
    public func keys(accessToken: String, since: String?) async throws(TrustClientError) -> PollResult? {
        let (status, body) = try await authorized(.GET, "/v1/keys" + (since.map { "?since=" + $0 } ?? ""), accessToken: accessToken, body: nil)
        switch status {
        case 200:
            guard let r = try? JSONDecoder().decode(PollResult.self, from: body) else { throw .protocolError("the poll answer does not decode") }
            return r
        case 204: return nil
        case 401:
            let e = (try? JSONDecoder().decode([String: String].self, from: body)) ?? [:]
            throw .unauthorized(e["error_description"] ?? "401")
        default: throw .protocolError("poll answered HTTP \(status)")
        }
    }

    /// `POST /v1/doors/{id}/reports`: what the phone saw at a door (`DoorReport`).
    public func reportDoor(_ report: DoorReport, accessToken: String) async throws(TrustClientError) {
        try await sendJSON(.POST, "/v1/doors/" + report.door + "/reports", ByteBuffer(string: report.encoded()), accessToken: accessToken, expect: 201)
    }

    /// `PUT /v1/push-token`: the service pushes to `token` when this device's keys change.
    public func registerPushToken(_ token: String, accessToken: String) async throws(TrustClientError) {
        guard let body = try? JSONEncoder().encode(["token": token]) else { throw .protocolError("the push token does not encode") }
        try await sendJSON(.PUT, "/v1/push-token", ByteBuffer(bytes: body), accessToken: accessToken, expect: 204)
    }

    /// A form `POST` (the OAuth endpoints: token, device authorization, revocation).
    func postForm(_ path: String, _ fields: [(String, String)]) async throws(TrustClientError) -> (Int, Data) {
        var request = HTTPClientRequest(url: baseURL + path)
        request.method = .POST
        request.headers.add(name: "Content-Type", value: "application/x-www-form-urlencoded")
        request.body = .bytes(ByteBuffer(string: Self.form(fields)))
        return try await send(request)
    }

    /// A JSON request with the access token that must answer `expect`: 401 is `.unauthorized`
    /// (the body as the reason), anything else the refusal's `error` and `error_description`.
    func sendJSON(_ method: HTTPMethod, _ path: String, _ body: ByteBuffer, accessToken: String, expect: Int) async throws(TrustClientError) {
        let (status, answer) = try await authorized(method, path, accessToken: accessToken, body: body)
        switch status {
        case expect: return
        case 401: throw .unauthorized(String(decoding: answer, as: UTF8.self))
        default: throw Self.oauthRefusal(status, answer)
        }
    }

    /// A request with the access token and, when given, a JSON body.
    func authorized(_ method: HTTPMethod, _ path: String, accessToken: String, body: ByteBuffer?) async throws(TrustClientError) -> (Int, Data) {
        var request = HTTPClientRequest(url: baseURL + path)
        request.method = method
        request.headers.add(name: "Authorization", value: "Bearer " + accessToken)
        if let body {
            request.headers.add(name: "Content-Type", value: "application/json")
            request.body = .bytes(body)
        }
        return try await send(request)
    }

    /// A refusal's `{"error", "error_description"}` (RFC 6749 §5.2) as `.oauth`; `http_STATUS`
    /// when the body carries none.
    static func oauthRefusal(_ status: Int, _ body: Data) -> TrustClientError {
        let e = (try? JSONDecoder().decode([String: String].self, from: body)) ?? [:]
        return .oauth(code: e["error"] ?? "http_\(status)", description: e["error_description"] ?? "")
    }

    func send(_ request: HTTPClientRequest) async throws(TrustClientError) -> (Int, Data) {
        try await Self.send(request, http: http, timeout: timeout, naming: baseURL)
    }

    /// One request: its status and body (at most 1 MiB); a failure to connect or read is a
    /// `network` error naming the server.
    static func send(_ request: HTTPClientRequest, http: HTTPClient, timeout: TimeAmount, naming server: String) async throws(TrustClientError) -> (Int, Data) {
        do {
            let response = try await http.execute(request, timeout: timeout)
            let body = try await response.body.collect(upTo: 1 << 20)
            return (Int(response.status.code), Data(body.readableBytesView))
        } catch {
            throw .network("\(server): \(networkReason(error, timeout: timeout))")
        }
    }

    /// Why a request got no answer, in words: the transport's own description names types and
    /// nests parentheses; the common cases get a sentence, the rest its text with parentheses balanced.
    static func networkReason(_ error: any Error, timeout: TimeAmount) -> String {
        let text = String(describing: error)
        if text.localizedCaseInsensitiveContains("refused") { return "connection refused: is the service running on that port?" }
        if text.localizedCaseInsensitiveContains("timeout") || text.localizedCaseInsensitiveContains("deadline") {
            return "no answer within \(timeout.nanoseconds / 1_000_000_000) s"
        }
        if text.localizedCaseInsensitiveContains("resolve") || text.localizedCaseInsensitiveContains("lookup") { return "cannot resolve the host name" }
        return balancingParentheses(String(text.prefix(300)))
    }

    /// `text` without unmatched ')' and with every unmatched '(' closed.
    static func balancingParentheses(_ text: String) -> String {
        var out = "", depth = 0
        for c in text {
            if c == "(" { depth += 1 } else if c == ")" { if depth == 0 { continue }; depth -= 1 }
            out.append(c)
        }
        return out + String(repeating: ")", count: depth)
    }

    static func form(_ fields: [(String, String)]) -> String {
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._~")
        return fields.map { k, v in
            (k.addingPercentEncoding(withAllowedCharacters: allowed) ?? k) + "=" + (v.addingPercentEncoding(withAllowedCharacters: allowed) ?? "")
        }.joined(separator: "&")
    }
}
