import TrustModel
import TrustCore
import HTTPServing
import Foundation
import Hummingbird
import Logging
import Metrics
import NIOCore
import Prometheus

/// The HTTP API (docs/trust-openapi.json): the OAuth token endpoint and the poll endpoint.
///
///   POST /v1/token            grant_type=authorization_code&code=… | grant_type=refresh_token&refresh_token=…
///   GET  /v1/keys?since=N     Authorization: Bearer <access token>   → 200 JSON, or 204 when nothing changed
///   POST /v1/device_authorization  client_id=…: re-authorization by a user code (RFC 8628; TrustAPI+DeviceAuthorization)
///   /v1/admin/…               the admin API, with scoped admin keys (TrustAPI+Admin)
///   POST /v1/revoke           token=…[&token_type_hint=refresh_token|access_token]: logout (RFC 7009)
///   GET  /v1/revocations      the latest revocation document (CBOR), for anyone to carry
///   GET  /healthz, GET /metrics (Prometheus text)
public enum TrustAPI {
    /// Bodies over this size are refused before they are read.
    public static let maxBody = 8192

    /// `pushTokens`: where `PUT /v1/push-token` hands a device's push token (Tapkey
    /// `updateRegistrationToken`); without it the route answers 501 (this server does not push).
    public static func router(service: TrustService, registry: PrometheusCollectorRegistry? = nil, metricsToken: String? = nil,
                              pushTokens: PushTokenRegistration? = nil, devicePush: DevicePush? = nil) -> Router<TrustRequestContext> {
        let router = Router(context: TrustRequestContext.self)
        router.add(middleware: WriteLatency())
        // Every route that needs a device goes through the one bearer check.
        let authenticated = router.group().add(middleware: BearerAuthentication(service: service))
        let polling = router.group().add(middleware: BearerAuthentication(service: service, login: .checkedByHandler))
        let polls = Counter(label: "lockbench_trust_polls_total")
        let unchanged = Counter(label: "lockbench_trust_polls_unchanged_total")
        let refreshes = Counter(label: "lockbench_trust_token_requests_total")
        let refused = Counter(label: "lockbench_trust_token_refusals_total")
        let pendingApprovals = Gauge(label: "lockbench_trust_approvals_pending")

        router.post("/v1/token") { request, _ -> Response in
            refreshes.increment()
            let buffer: ByteBuffer
            do { buffer = try await request.body.collect(upTo: maxBody) } catch {
                refused.increment()
                return Response(status: .contentTooLarge, body: jsonBody(["error": "invalid_request", "error_description": "the body is larger than \(maxBody) bytes"]))
            }
            let contentType = request.headers[.contentType] ?? ""
            guard contentType.lowercased().hasPrefix("application/x-www-form-urlencoded") else {
                refused.increment()
                return oauthError(.init(.invalidRequest, "the token endpoint takes application/x-www-form-urlencoded (RFC 6749 §4.1.3)"))
            }
            guard let form = FormBody(parsing: String(buffer: buffer)) else {
                refused.increment()
                return oauthError(.init(.invalidRequest, "the body is not a well-formed form (duplicate or undecodable parameter)"))
            }
            do {
                switch form["grant_type"] {
                case "refresh_token":
                    guard let token = form["refresh_token"], !token.isEmpty else { throw TrustError(.invalidRequest, "refresh_token is missing") }
                    return json(try await service.refresh(token: token), headers: [.cacheControl: "no-store", .init("Pragma")!: "no-cache"])
                case "authorization_code":
                    guard let code = form["code"], !code.isEmpty else { throw TrustError(.invalidRequest, "code is missing") }
                    return json(try await service.exchange(code: code), headers: [.cacheControl: "no-store", .init("Pragma")!: "no-cache"])
                case .some(DeviceAuthorizationResponse.grantType):
                    guard let code = form["device_code"], !code.isEmpty else { throw TrustError(.invalidRequest, "device_code is missing") }
                    return json(try await service.exchange(deviceCode: code), headers: [.cacheControl: "no-store", .init("Pragma")!: "no-cache"])
                case nil:
                    throw TrustError(.invalidRequest, "grant_type is missing")
                case let other?:
                    throw TrustError(.unsupportedGrantType, "grant_type \"\(other.prefix(64))\" is not supported; use refresh_token, authorization_code or \(DeviceAuthorizationResponse.grantType)")
                }
            } catch let e as TrustError {
                refused.increment()
                if form["grant_type"] == "refresh_token" {
                    Counter(label: "lockbench_trust_refresh_failures_total", dimensions: [("reason", e.code.rawValue)]).increment()
                }
                return oauthError(e)
            }
        }

        // RFC 7009 §2.2: 200 whether or not the token named a live login (nothing to learn from it).
        router.post("/v1/revoke") { request, _ -> Response in
            let buffer: ByteBuffer
            do { buffer = try await request.body.collect(upTo: maxBody) } catch {
                return Response(status: .contentTooLarge, body: jsonBody(["error": "invalid_request", "error_description": "the body is larger than \(maxBody) bytes"]))
            }
            guard (request.headers[.contentType] ?? "").lowercased().hasPrefix("application/x-www-form-urlencoded") else {
                return oauthError(.init(.invalidRequest, "the revocation endpoint takes application/x-www-form-urlencoded (RFC 7009 §2.1)"))
            }
            guard let form = FormBody(parsing: String(buffer: buffer)) else {
                return oauthError(.init(.invalidRequest, "the body is not a well-formed form (duplicate or undecodable parameter)"))
            }
            guard let token = form["token"], !token.isEmpty else { return oauthError(.init(.invalidRequest, "token is missing (RFC 7009 §2.1)")) }
            do { try await service.revoke(token: token, hint: form["token_type_hint"]) } catch {
                return Response(status: .serviceUnavailable, body: jsonBody(["error": "temporarily_unavailable", "error_description": "the revocation could not be stored"]))
            }
            return Response(status: .ok, headers: [.cacheControl: "no-store"])
        }

        polling.get("/v1/keys") { request, context -> Response in
            guard let claims = context.claims else { return BearerAuthentication.unauthorized(TrustRequestContext.noToken) }
            var since: Int64?
            if let s = request.uri.queryParameters["since"].map(String.init) {
                guard let n = Int64(s), n >= 0 else {
                    return Response(status: .badRequest, body: jsonBody(["error": "invalid_request", "error_description": "since must be a cursor from an earlier poll (a non-negative integer)"]))
                }
                since = n
            }
            polls.increment()
            do {
                guard let result = try await service.poll(device: claims.sub.value, since: since, family: claims.fam) else {
                    unchanged.increment()
                    return Response(status: .noContent)
                }
                return json(bytes: result.json(), headers: [.cacheControl: "no-store"])
            } catch let e as TrustError {
                return BearerAuthentication.unauthorized(e.message)
            }
        }

        authenticated.put("/v1/push-token") { request, context -> Response in
            guard let device = context.claims?.sub.value else { return BearerAuthentication.unauthorized(TrustRequestContext.noToken) }
            guard let pushTokens else {
                return Response(status: .notImplemented, body: jsonBody(["error": "push_not_configured", "error_description": "this trust service pushes nothing (trust serve --push-relay URL)"]))
            }
            let body = try? await request.body.collect(upTo: 8192)
            guard let body, let object = try? JSONSerialization.jsonObject(with: Data(body.readableBytesView)) as? [String: Any],
                  let token = object["token"] as? String, PushTokenRules.isValid(token) else {
                return Response(status: .badRequest, body: jsonBody(["error": "invalid_request", "error_description": "the body must be {\"token\": TOKEN}: 1…\(PushTokenRules.maxBytes) bytes of printable ASCII"]))
            }
            do { try await pushTokens(device, token) } catch {
                return Response(status: .serviceUnavailable, body: jsonBody(["error": "temporarily_unavailable", "error_description": "the push token could not be stored: \(error)"]))
            }
            return Response(status: .noContent)
        }

        router.get("/v1/revocations") { _, _ -> Response in
            guard let list = try await service.revocationList() else { return Response(status: .noContent) }
            return Response(status: .ok, headers: [.contentType: "application/cbor", .init("Revocation-Serial")!: String(list.serial)],
                            body: .init(byteBuffer: ByteBuffer(bytes: list.document)))
        }

        addApprovalRoutes(to: authenticated, service: service, devicePush: devicePush)
        addDoorRoutes(to: authenticated, service: service)
        addDeviceAuthorizationRoutes(to: router, authenticated: authenticated, service: service)
        addAdminRoutes(to: router, service: service)

        router.get("/healthz") { _, _ -> String in "ok\n" }

        if let registry {
            router.get("/metrics") { request, _ -> Response in
                if let metricsToken, request.headers[.authorization] != "Bearer " + metricsToken {
                    return Response(status: .unauthorized, headers: [.wwwAuthenticate: "Bearer realm=\"metrics\""],
                                    body: jsonBody(["error": "invalid_token", "error_description": "/metrics needs the token given to trust serve --metrics-token"]))
                }
                // Counted at the scrape, site-wide (every instance's requests).
                if let n = try? await service.pendingApprovalCount() { pendingApprovals.record(n) }
                var out = [UInt8]()
                registry.emit(into: &out)
                return Response(status: .ok, headers: [.contentType: "text/plain; version=0.0.4"], body: .init(byteBuffer: ByteBuffer(bytes: out)))
            }
        }
        return router
    }

    static func oauthError(_ e: TrustError) -> Response {
        // RFC 6749 §5.2: 400 with error and error_description.
        Response(status: .badRequest, headers: [.cacheControl: "no-store"],
                 body: jsonBody(["error": e.code.rawValue, "error_description": e.message]))
    }

    static func json<T: Encodable>(_ value: T, headers: HTTPFields = [:]) -> Response {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return json(bytes: Array((try? encoder.encode(value)) ?? Data("{}".utf8)), headers: headers)
    }

    /// 200 with a JSON body already encoded.
    static func json(bytes: [UInt8], headers: HTTPFields = [:]) -> Response {
        var h = headers
        h[.contentType] = "application/json"
        return Response(status: .ok, headers: h, body: .init(byteBuffer: ByteBuffer(bytes: bytes)))
    }

    static func jsonBody(_ fields: [String: String]) -> ResponseBody {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return .init(byteBuffer: ByteBuffer(bytes: (try? encoder.encode(fields)) ?? Data()))
    }
}
