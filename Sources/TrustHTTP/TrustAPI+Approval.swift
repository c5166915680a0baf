import TrustModel
import TrustCore
import HTTPServing
import Foundation
import Hummingbird
import NIOCore

/// Push approval over HTTP (docs/trust-openapi.json), every call with the device's bearer token:
///
///   POST /v1/approvals                 the requester asks            → 201 ApprovalView (the number to show)
///   GET  /v1/approvals                 the approver's pending inbox  → 200 ApprovalInbox
///   GET  /v1/approvals/{id}            either party                  → 200 ApprovalView (requester: the unlock command once approved)
///   POST /v1/approvals/{id}/accept     {"challengeResponse": 34, "authentication": "tap|biometric|deviceCredentials"}
///   POST /v1/approvals/{id}/deny
///
/// Refusals are `{"error", "error_description"}`: 400 invalid_request, challenge_response_required,
/// biometric_required; 401 invalid_token; 403 forbidden; 404 not_found; 409 already_answered;
/// 410 approval_expired; 429 too_many_pending.
extension TrustAPI {
    /// With `devicePush`, a new request is pushed to the approver's active devices and an answer to
    /// the requester's (ForgeRock: the approver's app is woken by push); a push is a hint, the
    /// phones' fetch is the truth, so the answer to the caller does not wait on it.
    static func addApprovalRoutes(to router: RouterGroup<TrustRequestContext>, service: TrustService, devicePush: DevicePush?) {
        @Sendable func pushed(_ r: ApprovalRecord, toApprover: Bool) {
            guard let devicePush else { return }
            Task {
                let devices = toApprover
                    ? ((try? await service.devices(user: r.approver)) ?? []).filter { $0.credentialState.holdsKeys }.map(\.id)
                    : [r.requester]
                await devicePush(ApprovalPush.data(r), devices)
            }
        }
        router.post("/v1/approvals") { request, context -> Response in
            await answer(service, request, context) { device, body in
                let r = try decode(ApprovalRequest.self, body)
                let record = try await service.requestApproval(r, requester: device)
                pushed(record, toApprover: true)
                return json(ApprovalView(record, as: .requester, now: service.now()), status: .created)
            }
        }
        router.get("/v1/approvals") { request, context -> Response in
            await answer(service, request, context) { device, _ in
                let now = service.now()
                let pending = try await service.pendingApprovals(device: device)
                return json(ApprovalInbox(approvals: pending.map { ApprovalView($0, as: .approver, now: now) }), status: .ok)
            }
        }
        router.get("/v1/approvals/:id") { request, context -> Response in
            let id = context.parameters.get("id") ?? ""
            return await answer(service, request, context) { device, _ in
                let (r, role) = try await service.approval(id: id, device: device)
                return json(ApprovalView(r, as: role, now: service.now()), status: .ok)
            }
        }
        router.post("/v1/approvals/:id/accept") { request, context -> Response in
            let id = context.parameters.get("id") ?? ""
            return await answer(service, request, context) { device, body in
                let a = body.readableBytes == 0 ? AcceptBody() : try decode(AcceptBody.self, body)
                let r = try await service.answerApproval(id: id, device: device,
                                                         .accept(challengeResponse: a.challengeResponse, authentication: a.authentication ?? .tap))
                pushed(r, toApprover: false)
                return json(ApprovalView(r, as: .approver, now: service.now()), status: .ok)
            }
        }
        router.post("/v1/approvals/:id/deny") { request, context -> Response in
            let id = context.parameters.get("id") ?? ""
            return await answer(service, request, context) { device, _ in
                let r = try await service.answerApproval(id: id, device: device, .deny)
                pushed(r, toApprover: false)
                return json(ApprovalView(r, as: .approver, now: service.now()), status: .ok)
            }
        }
    }

    /// ForgeRock's `accept(challengeResponse:)` / `accept(title:allowDeviceCredentials:)` as a body.
    struct AcceptBody: Codable {
        var challengeResponse: Int?
        var authentication: ApprovalAuthentication?
    }

    /// Reads a bounded body, runs `body` as the device `BearerAuthentication` put in the context,
    /// maps refusals to statuses.
    static func answer(_ service: TrustService, _ request: Request, _ context: TrustRequestContext,
                       _ body: (String, ByteBuffer) async throws -> Response) async -> Response {
        guard let device = context.claims?.sub.value else { return BearerAuthentication.unauthorized(TrustRequestContext.noToken) }
        var request = request
        let buffer: ByteBuffer
        do { buffer = try await request.collectBody(upTo: maxBody) } catch {
            return Response(status: .contentTooLarge, body: jsonBody(["error": "invalid_request", "error_description": "the body is larger than \(maxBody) bytes"]))
        }
        do {
            return try await body(device, buffer)
        } catch let e as TrustError {
            let status: HTTPResponse.Status = switch e.code {
            case .forbidden: .forbidden
            case .notFound: .notFound
            case .alreadyAnswered, .conflict: .conflict
            case .approvalExpired: .gone
            case .tooManyPending: .tooManyRequests
            case .invalidToken: .unauthorized
            default: .badRequest
            }
            return Response(status: status, body: jsonBody(["error": e.code.rawValue, "error_description": e.message]))
        } catch {
            return Response(status: .internalServerError, body: jsonBody(["error": "server_error", "error_description": "\(error)"]))
        }
    }

    static func decode<T: Decodable>(_ type: T.Type, _ body: ByteBuffer) throws(TrustError) -> T {
        do { return try JSONDecoder().decode(T.self, from: Data(buffer: body)) } catch {
            throw TrustError(.invalidRequest, "the body is not the JSON this operation takes: \(Self.describe(error))")
        }
    }

    static func describe(_ error: any Error) -> String {
        switch error as? DecodingError {
        case .keyNotFound(let k, _)?: return "\(k.stringValue) is missing"
        case .typeMismatch(_, let c)?, .dataCorrupted(let c)?, .valueNotFound(_, let c)?: return "\(c.codingPath.map(\.stringValue).joined(separator: ".")): \(c.debugDescription)"
        default: return "not JSON"
        }
    }

    static func json<T: Encodable>(_ value: T, status: HTTPResponse.Status) -> Response {
        var r = json(value, headers: [.cacheControl: "no-store"])
        r.status = status
        return r
    }
}
