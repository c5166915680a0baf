import ByteCore
import Codecs
import TrustModel
import TrustCore
import Foundation
import Hummingbird
import NIOCore

/// The admin API (issue 22 §3; docs/trust-openapi.json): what the command line does, over HTTP,
/// through the same service calls, with an admin key (`Authorization: Bearer lbk.ID.SECRET`, from
/// `trust admin-key create --scope …`) holding the route's scope. 401 invalid_token for no or an
/// unknown key (a phone's token included), 403 insufficient_scope for a key without the scope.
///
///   GET  /v1/admin/users                      devices:read
///   GET  /v1/admin/devices[?user=U]           devices:read
///   POST /v1/admin/devices                    devices:write       {"device","user","credentialKey": hex point} → 201 with the login code
///   GET  /v1/admin/devices/{id}/events       devices:read        the device's history, oldest first
///   POST /v1/admin/devices/{id}/credential    credentials:write   {"state": active|suspended|deactivated|deleted, "reason"}
///   GET  /v1/admin/grants[?user=U]            grants:read
///   POST /v1/admin/grants                     grants:write        {"grant","user","readers":[…],"schedules":[…]} → 201
///   POST /v1/admin/grants/{id}/modify         grants:write        {"readers":[…],"schedules":[…]} (either or both) → the grant, re-issued
///   POST /v1/admin/grants/{id}/revoke         grants:write        {"reason"}
///   GET  /v1/admin/revocations                revocations:read
///   GET  /v1/admin/doors/{id}                 doors:read          what phones reported of door GROUP:SUB
extension TrustAPI {
    struct AdminDevice: Codable { var device: String; var user: String; var credential: String; var code: String? }
    struct AdminGrant: Codable { var grant: String; var user: String; var readers: [String]; var schedules: [String]; var state: String; var reason: String? }
    struct NewDevice: Codable { var device: String; var user: String; var credentialKey: String }
    struct NewGrant: Codable { var grant: String; var user: String; var readers: [String]; var schedules: [String]? }
    struct CredentialChange: Codable { var state: String; var reason: String? }
    struct Reason: Codable { var reason: String }
    struct GrantChange: Codable { var readers: [String]?; var schedules: [String]? }
    struct DeviceHistory: Codable { var device: String; var retained: Int; var events: [DeviceEvent] }

    static func adminGrant(_ g: GrantRecord) -> AdminGrant {
        AdminGrant(grant: g.id, user: g.user, readers: g.readers, schedules: g.schedules, state: g.state.rawValue, reason: g.reason)
    }

    static func addAdminRoutes(to router: Router<TrustRequestContext>, service: TrustService) {
        /// Checks the key and scope, reads a bounded body, runs `body`, maps refusals.
        @Sendable func admin(_ scope: AdminScope, _ request: Request, _ body: @Sendable (ByteBuffer) async throws -> Response) async -> Response {
            let presented = request.headers[.authorization].flatMap { h in h.lowercased().hasPrefix("bearer ") ? String(h.dropFirst(7)) : nil } ?? ""
            do { _ = try await service.authorizeAdmin(presented, scope: scope) } catch let e as TrustError {
                if e.code == .forbidden {
                    return Response(status: .forbidden, headers: [.wwwAuthenticate: "Bearer realm=\"admin\", error=\"insufficient_scope\", scope=\"\(scope.rawValue)\""],
                                    body: jsonBody(["error": "insufficient_scope", "error_description": e.message]))
                }
                return Response(status: .unauthorized, headers: [.wwwAuthenticate: "Bearer realm=\"admin\""],
                                body: jsonBody(["error": "invalid_token", "error_description": e.message]))
            } catch {
                return Response(status: .serviceUnavailable, body: jsonBody(["error": "temporarily_unavailable", "error_description": "\(error)"]))
            }
            var request = request
            let buffer: ByteBuffer
            do { buffer = try await request.collectBody(upTo: maxBody) } catch {
                return Response(status: .contentTooLarge, body: jsonBody(["error": "invalid_request", "error_description": "the body is larger than \(maxBody) bytes"]))
            }
            do { return try await body(buffer) } catch let e as TrustError {
                let status: HTTPResponse.Status = switch e.code {
                case .notFound: .notFound
                case .conflict, .final: .conflict
                default: .badRequest
                }
                return Response(status: status, body: jsonBody(["error": e.code.rawValue, "error_description": e.message]))
            } catch {
                return Response(status: .internalServerError, body: jsonBody(["error": "server_error", "error_description": "\(error)"]))
            }
        }
        @Sendable func user(_ request: Request) -> String? { request.uri.queryParameters["user"].map { String(String($0).prefix(128)) } }

        router.get("/v1/admin/users") { request, _ -> Response in
            await admin(.devicesRead, request) { _ in
                json(["users": Array(Set(try await service.devices().map(\.user))).sorted()])
            }
        }
        router.get("/v1/admin/devices") { request, _ -> Response in
            let u = user(request)
            return await admin(.devicesRead, request) { _ in
                json(["devices": try await service.devices(user: u).map { AdminDevice(device: $0.id, user: $0.user, credential: $0.credentialState.rawValue) }])
            }
        }
        router.post("/v1/admin/devices") { request, _ -> Response in
            await admin(.devicesWrite, request) { body in
                let d = try decode(NewDevice.self, body)
                guard let key = Hex.decode(d.credentialKey), key.count == 65 else {
                    throw TrustError(.invalidRequest, "credentialKey is the phone's public key, 65 bytes in hex (04…)")
                }
                let code = try await service.addDevice(id: d.device, user: d.user, credentialKey: key)
                return json(AdminDevice(device: d.device, user: d.user, credential: CredentialState.active.rawValue, code: code), status: .created)
            }
        }
        router.get("/v1/admin/devices/:id/events") { request, context -> Response in
            let id = context.parameters.get("id") ?? ""
            return await admin(.devicesRead, request) { _ in
                json(DeviceHistory(device: id, retained: DeviceEvent.retained, events: try await service.deviceHistory(device: id)))
            }
        }
        router.post("/v1/admin/devices/:id/credential") { request, context -> Response in
            let id = context.parameters.get("id") ?? ""
            return await admin(.credentialsWrite, request) { body in
                let c = try decode(CredentialChange.self, body)
                guard let state = CredentialState(rawValue: c.state) else {
                    throw TrustError(.invalidRequest, "state is one of \(CredentialState.allCases.map(\.rawValue).joined(separator: ", "))")
                }
                _ = try await service.setCredential(device: id, to: state, reason: c.reason)
                return json(["device": id, "credential": state.rawValue])
            }
        }
        router.get("/v1/admin/grants") { request, _ -> Response in
            let u = user(request)
            return await admin(.grantsRead, request) { _ in json(["grants": try await service.grants(user: u).map(adminGrant)]) }
        }
        router.post("/v1/admin/grants") { request, _ -> Response in
            await admin(.grantsWrite, request) { body in
                let g = try decode(NewGrant.self, body)
                _ = try await service.addGrant(id: g.grant, user: g.user, readers: g.readers, schedules: g.schedules ?? [])
                guard let stored = try await service.grants(user: g.user).first(where: { $0.id == g.grant }) else { throw TrustError(.notFound, "grant \(g.grant)") }
                return json(adminGrant(stored), status: .created)
            }
        }
        router.post("/v1/admin/grants/:id/modify") { request, context -> Response in
            let id = context.parameters.get("id") ?? ""
            return await admin(.grantsWrite, request) { body in
                let m = try decode(GrantChange.self, body)
                guard m.readers != nil || m.schedules != nil else {
                    throw TrustError(.invalidRequest, "name readers, schedules or both (an empty schedules list lifts every window)")
                }
                _ = try await service.modifyGrant(id: id, readers: m.readers, schedules: m.schedules)
                guard let stored = try await service.grants().first(where: { $0.id == id }) else { throw TrustError(.notFound, "grant \(id)") }
                return json(adminGrant(stored))
            }
        }
        router.post("/v1/admin/grants/:id/revoke") { request, context -> Response in
            let id = context.parameters.get("id") ?? ""
            return await admin(.grantsWrite, request) { body in
                let r = try decode(Reason.self, body)
                _ = try await service.revokeGrant(id: id, reason: r.reason)
                guard let stored = try await service.grants().first(where: { $0.id == id }) else { throw TrustError(.notFound, "grant \(id)") }
                return json(adminGrant(stored))
            }
        }
        router.get("/v1/admin/doors/:id") { request, context -> Response in
            let id = context.parameters.get("id") ?? ""
            return await admin(.doorsRead, request) { _ in json(try await service.door(id)) }
        }
        router.get("/v1/admin/revocations") { request, _ -> Response in
            await admin(.revocationsRead, request) { _ in
                let serial = try await service.revocationList()?.serial
                let entries = try await service.revocationEntries().map { e in
                    ["cause": e.cause, "expiry": RFC3339.format(e.expiry),
                     "publicKeyHash": e.publicKeyHash.map(Hex.encode) ?? "", "documentID": e.documentID.map(Hex.encode) ?? ""]
                }
                return json(RevocationsView(serial: serial.map { Int64($0) }, entries: entries))
            }
        }
    }

    struct RevocationsView: Codable { var serial: Int64?; var entries: [[String: String]] }
}
