import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import TrustModel

/// The phone's side of push approval over HTTP (docs/trust-openapi.json, `/v1/approvals`).
extension TrustClient {
    public func requestApproval(accessToken: String, _ request: ApprovalRequest) async throws(TrustClientError) -> ApprovalView {
        try await call(.POST, "/v1/approvals", accessToken: accessToken, body: try? JSONEncoder().encode(request), expect: 201)
    }

    public func approvalInbox(accessToken: String) async throws(TrustClientError) -> ApprovalInbox {
        try await call(.GET, "/v1/approvals", accessToken: accessToken, body: nil, expect: 200)
    }

    public func approval(accessToken: String, id: String) async throws(TrustClientError) -> ApprovalView {
        try await call(.GET, "/v1/approvals/" + Self.segment(id), accessToken: accessToken, body: nil, expect: 200)
    }

    /// ForgeRock `accept(…)`: `challengeResponse` for a challenge, `authentication` for biometrics.
    public func accept(accessToken: String, id: String, challengeResponse: Int?, authentication: ApprovalAuthentication) async throws(TrustClientError) -> ApprovalView {
        struct Body: Encodable { var challengeResponse: Int?; var authentication: ApprovalAuthentication }
        let data = try? JSONEncoder().encode(Body(challengeResponse: challengeResponse, authentication: authentication))
        return try await call(.POST, "/v1/approvals/" + Self.segment(id) + "/accept", accessToken: accessToken, body: data, expect: 200)
    }

    public func deny(accessToken: String, id: String) async throws(TrustClientError) -> ApprovalView {
        try await call(.POST, "/v1/approvals/" + Self.segment(id) + "/deny", accessToken: accessToken, body: nil, expect: 200)
    }

    func call<T: Decodable>(_ method: HTTPMethod, _ path: String, accessToken: String, body: Data?, expect: Int) async throws(TrustClientError) -> T {
        let (status, data) = try await authorized(method, path, accessToken: accessToken, body: body.map { ByteBuffer(bytes: $0) })
        if status == expect {
            do { return try JSONDecoder().decode(T.self, from: data) } catch {
                throw .protocolError("\(method) \(path) answered JSON that does not decode: \(error)")
            }
        }
        let e = (try? JSONDecoder().decode([String: String].self, from: data)) ?? [:]
        if status == 401 { throw .unauthorized(e["error_description"] ?? "401") }
        throw .refused(status: status, code: e["error"] ?? "http_\(status)", description: e["error_description"] ?? "")
    }

    /// A path segment: ids are hex, anything else is percent-encoded.
    static func segment(_ s: String) -> String {
        s.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""
    }
}
