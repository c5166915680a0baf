import TrustModel
import TrustCore
import Foundation
import Hummingbird
import NIOCore

/// The device authorization grant over HTTP (RFC 8628; docs/trust-openapi.json):
///
///   POST /v1/device_authorization            client_id=DEVICE               → 200 DeviceAuthorizationResponse
///   POST /v1/device_authorization/approve    {"user_code": "BCDF-GHJK", "deny": false}, bearer of another phone of the user → 204
///   POST /v1/token                           grant_type=urn:ietf:params:oauth:grant-type:device_code&device_code=… (TrustAPI)
extension TrustAPI {
    static func addDeviceAuthorizationRoutes(to router: Router<TrustRequestContext>, authenticated: RouterGroup<TrustRequestContext>, service: TrustService) {
        router.post("/v1/device_authorization") { request, _ -> Response in
            let buffer: ByteBuffer
            do { buffer = try await request.body.collect(upTo: maxBody) } catch {
                return Response(status: .contentTooLarge, body: jsonBody(["error": "invalid_request", "error_description": "the body is larger than \(maxBody) bytes"]))
            }
            guard (request.headers[.contentType] ?? "").lowercased().hasPrefix("application/x-www-form-urlencoded") else {
                return oauthError(.init(.invalidRequest, "the device authorization endpoint takes application/x-www-form-urlencoded (RFC 8628 §3.1)"))
            }
            guard let form = FormBody(parsing: String(buffer: buffer)) else {
                return oauthError(.init(.invalidRequest, "the body is not a well-formed form (duplicate or undecodable parameter)"))
            }
            // Where the user approves: this server's approval endpoint, as the phone reached it.
            let authority = request.head.authority.map { String($0.prefix(255)) } ?? "127.0.0.1"
            do {
                let r = try await service.requestDeviceAuthorization(device: form["client_id"] ?? "",
                                                                     verificationURI: "http://" + authority + "/v1/device_authorization/approve")
                return json(r, headers: [.cacheControl: "no-store"])
            } catch let e as TrustError {
                return oauthError(e)
            }
        }
        authenticated.post("/v1/device_authorization/approve") { request, context -> Response in
            await answer(service, request, context) { device, body in
                let a = try decode(ApproveBody.self, body)
                try await service.answerDeviceAuthorization(userCode: a.user_code, approve: !(a.deny ?? false), approver: device)
                return Response(status: .noContent)
            }
        }
    }

    struct ApproveBody: Codable {
        var user_code: String
        var deny: Bool?
    }
}
