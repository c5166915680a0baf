import Crypto
import Foundation
import Hummingbird
import NIOCore

/// The relay on HTTP, shaped like the services a backend already talks to, plus the wake-up REST
/// requests and the phone's inbox:
///
///   POST /3/device/{token}                      APNs: JSON body ≤ 4096 bytes; apns-collapse-id, apns-expiration, apns-push-type
///   POST /v1/projects/{p}/messages:send          FCM v1: {"message":{"token","data":{…strings…},"android":{"ttl","collapse_key"}}}
///   PUT|DELETE /base/{app}/.wakeup/{path}?id=&token=&mode=    wake-up subscriptions (204 / 403 / 404)
///   GET|PUT|DELETE /base/{app}/{path}            the data tree (the explicit read, and writes that wake devices)
///   POST /lockbench/devices/{token}              a phone registers a token (its inbox); DELETE retires it
///   GET  /lockbench/devices/{token}/inbox?wait=S  the phone collects its pushes (long poll, ≤ 30 s)
///
/// With a provider key (`push serve --provider-key`), every push and every data write needs a
/// provider token signed with its private half (`ProviderToken`), verified on every request.
public enum PushAPI {
    /// Request bodies larger than this are not read (the payload rule is checked on what was read).
    public static let maxBody = 64 * 1024

    public static func router(relay: PushRelay, wakeUp: WakeUpService, inboxes: PushInboxes,
                              providerKey: P256.Signing.PublicKey? = nil) -> Router<BasicRequestContext> {
        let router = Router(context: BasicRequestContext.self)
        /// The sender's refusal, or nil when the relay verifies no one or the token holds.
        @Sendable func unverifiedSender(_ request: Request) -> PushRefusal? {
            guard let providerKey else { return nil }
            do throws(PushRefusal) { try ProviderToken.verify(request.headers[.authorization], key: providerKey, now: relay.clock.now()) }
            catch { return error }
            return nil
        }

        router.post("/3/device/:token") { request, context -> Response in
            let token = context.parameters.get("token") ?? ""
            if let refusal = unverifiedSender(request) { return apnsError(refusal) }
            let body: ByteBuffer
            do { body = try await request.body.collect(upTo: maxBody) } catch { return apnsError(.payloadTooLarge(maxBody + 1)) }
            guard let object = try? JSONSerialization.jsonObject(with: Data(body.readableBytesView)) as? [String: Any] else {
                return apnsError(.invalidArgument("the body is not a JSON object"), reason: "PayloadEmpty")
            }
            var data = [String: String]()
            for (k, v) in object where k != "aps" { data[k] = (v as? String) ?? jsonText(v) }
            let aps = object["aps"] as? [String: Any] ?? [:]
            let background = (aps["content-available"] as? Int) == 1 && aps["alert"] == nil
                || request.headers[.init("apns-push-type")!] == "background"
            var ttl = PushRules.defaultTimeToLive
            if let e = request.headers[.init("apns-expiration")!] {
                guard let epoch = Int64(e), epoch >= 0 else { return apnsError(.badExpiration) }
                ttl = epoch == 0 ? 0 : max(0, Double(epoch) - relay.clock.now().timeIntervalSince1970)
            }
            let message = PushMessage(token: token, data: data, payloadBytes: body.readableBytes, timeToLive: ttl,
                                      collapseID: request.headers[.init("apns-collapse-id")!], background: background, service: .apns)
            do {
                let id = try await relay.send(message)
                return Response(status: .ok, headers: [.init("apns-id")!: id] as HTTPFields)
            } catch {
                return apnsError(refusal(error))
            }
        }

        router.post("/v1/projects/:project/messages:send") { request, context -> Response in
            let project = context.parameters.get("project") ?? ""
            if let refusal = unverifiedSender(request) { return fcmError(refusal) }
            let body: ByteBuffer
            do { body = try await request.body.collect(upTo: maxBody) } catch { return fcmError(.invalidArgument("the request is larger than \(maxBody) bytes")) }
            guard let object = try? JSONSerialization.jsonObject(with: Data(body.readableBytesView)) as? [String: Any],
                  let message = object["message"] as? [String: Any] else {
                return fcmError(.invalidArgument("the body is not {\"message\": {...}}"))
            }
            guard let token = message["token"] as? String else { return fcmError(.invalidArgument("message.token is missing (topics and conditions are not relayed)")) }
            var data = [String: String]()
            for (k, v) in (message["data"] as? [String: Any]) ?? [:] {
                guard let s = v as? String else {
                    return fcmError(.invalidArgument("Invalid value at 'message.data[\(k.prefix(64))]' (TYPE_STRING): data values must be strings"))
                }
                data[k] = s
            }
            let android = message["android"] as? [String: Any] ?? [:]
            var ttl = PushRules.defaultTimeToLive
            if let t = android["ttl"] as? String {
                guard t.hasSuffix("s"), let seconds = Double(t.dropLast()), seconds >= 0, seconds.isFinite else {
                    return fcmError(.invalidArgument("android.ttl \"\(t.prefix(32))\" is not a duration like \"3600s\""))
                }
                ttl = min(seconds, PushRules.defaultTimeToLive)
            }
            let apnsHeaders = (message["apns"] as? [String: Any])?["headers"] as? [String: Any] ?? [:]
            let collapse = (android["collapse_key"] as? String) ?? (apnsHeaders["apns-collapse-id"] as? String)
            let background = message["notification"] == nil
            let size = PushRules.compactJSON(data).utf8.count
            do {
                let id = try await relay.send(PushMessage(token: token, data: data, payloadBytes: size, timeToLive: ttl,
                                                          collapseID: collapse, background: background, service: .fcm))
                return json(["name": "projects/\(project)/messages/\(id)"])
            } catch {
                return fcmError(refusal(error))
            }
        }

        // Phones: register a token, collect pushes, retire the token.
        // `?state=foreground|background|force-quit`: what the phone's app is doing (a force-quit app
        // gets no background push until it is launched again).
        router.post("/lockbench/devices/:token") { request, context -> Response in
            let token = context.parameters.get("token") ?? ""
            let text = request.uri.queryParameters["state"].map(String.init) ?? PushAppState.background.rawValue
            guard let state = PushAppState(rawValue: text) else {
                return fcmError(.invalidArgument("state '\(text)' is not one of \(PushAppState.allCases.map(\.rawValue).joined(separator: ", "))"))
            }
            do { try inboxes.open(token, state: state, secret: bearer(request) ?? "") } catch { return fcmError(refusal(error)) }
            return Response(status: .noContent)
        }
        router.delete("/lockbench/devices/:token") { request, context -> Response in
            let token = context.parameters.get("token") ?? ""
            // Retiring what is not there is done already; what is there only by its owner.
            if inboxes.isInbox(token), !inboxes.close(token, secret: bearer(request)) { return notOwner(token) }
            return Response(status: .noContent)
        }
        router.get("/lockbench/devices/:token/inbox") { request, context -> Response in
            let token = context.parameters.get("token") ?? ""
            // A retired token answers as APNs and FCM do (410/404); a live one only to its owner.
            guard inboxes.isInbox(token) else { return fcmError(.unregistered(since: Date())) }
            guard inboxes.owns(token, secret: bearer(request)) else { return notOwner(token) }
            let wait = min(30, max(0, Double(request.uri.queryParameters["wait"].map(String.init) ?? "0") ?? 0))
            guard let messages = await inboxes.collect(token, wait: wait) else {
                return fcmError(.unregistered(since: Date()))
            }
            return Response(status: .ok, headers: [.contentType: "application/json"],
                            body: .init(byteBuffer: ByteBuffer(string: CompactJSON.array(messages.map(PushRules.compactJSON)))))
        }

        // Wake-up subscriptions and the data tree.
        for method in [HTTPRequest.Method.put, .delete, .get] {
            router.on("/base/**", method: method) { request, _ -> Response in
                await wakeUpRequest(request, method: method, wakeUp: wakeUp, inboxes: inboxes, verifySender: unverifiedSender)
            }
        }
        router.get("/healthz") { _, _ -> String in "ok\n" }
        return router
    }

    /// The phone's inbox secret (`Authorization: Bearer SECRET`).
    static func bearer(_ request: Request) -> String? {
        guard let h = request.headers[.authorization], h.lowercased().hasPrefix("bearer ") else { return nil }
        return String(h.dropFirst("bearer ".count)).trimmingCharacters(in: .whitespaces)
    }

    /// 403 for a caller without the inbox's secret.
    static func notOwner(_ token: String) -> Response {
        fcmError(.forbidden("the inbox of this token needs the secret it was opened with (Authorization: Bearer SECRET)"))
    }

    static func wakeUpRequest(_ request: Request, method: HTTPRequest.Method, wakeUp: WakeUpService, inboxes: PushInboxes,
                              verifySender: @Sendable (Request) -> PushRefusal? = { _ in nil }) async -> Response {
        let raw = request.uri.path.dropFirst("/base/".count)
        let parts = raw.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false)
        let app = String(parts[0])
        var rest = parts.count > 1 ? String(parts[1]) : ""
        rest = rest.removingPercentEncoding ?? rest
        let query = request.uri.queryParameters
        let device = query["id"].map { String($0).removingPercentEncoding ?? String($0) }
        let token = query["token"].map { String($0).removingPercentEncoding ?? String($0) }
        do {
            try WakeUpService.checkApp(app)
            if rest == ".wakeup" || rest.hasPrefix(".wakeup/") {
                let path = try WakeUpPath(parsing: String(rest.dropFirst(".wakeup".count)))
                guard let device, !device.isEmpty else { throw WakeUpError(.badRequest, "id (the FCM device id) is mandatory") }
                // A phone with an inbox here subscribes and unsubscribes only itself.
                if inboxes.isInbox(device), !inboxes.owns(device, secret: bearer(request)) {
                    throw WakeUpError(.permissionDenied, "id names a phone of this relay: its inbox secret is needed (Authorization: Bearer SECRET)")
                }
                switch method {
                case .put:
                    let mode = try WakeUpMode(parsing: query["mode"].map(String.init))
                    try wakeUp.subscribe(app: app, path: path, device: device, token: token, mode: mode)
                case .delete:
                    try wakeUp.unsubscribe(app: app, path: path, device: device, token: token)
                default:
                    throw WakeUpError(.badRequest, "a wake-up subscription is made with PUT and removed with DELETE")
                }
                return Response(status: .noContent)
            }
            let path = try WakeUpPath(parsing: rest)
            // A data write wakes devices: it is a push, from a verified sender.
            if method != .get, let refusal = verifySender(request) {
                throw WakeUpError(.permissionDenied, refusal.description)
            }
            switch method {
            case .get:
                let value = try wakeUp.read(app: app, path: path, token: token)
                return Response(status: .ok, headers: [.contentType: "application/json"], body: .init(byteBuffer: ByteBuffer(string: (value ?? .null).encoded())))
            case .put:
                let body = try await request.body.collect(upTo: 1 << 20)
                try await wakeUp.write(app: app, path: path, value: try WakeUpValue(parsing: String(buffer: body)))
                return Response(status: .noContent)
            default:
                try await wakeUp.write(app: app, path: path, value: nil)
                return Response(status: .noContent)
            }
        } catch let e as WakeUpError {
            return Response(status: .init(code: e.code.httpStatus), headers: [.contentType: "application/json"],
                            body: .init(byteBuffer: ByteBuffer(string: CompactJSON.object([("status", CompactJSON.string(e.code.rawValue)), ("message", CompactJSON.string(e.message))]))))
        } catch {
            return Response(status: .contentTooLarge, headers: [.contentType: "application/json"],
                            body: .init(byteBuffer: ByteBuffer(string: #"{"status":"bad_request","message":"the body is larger than 1 MiB"}"#)))
        }
    }

    static func refusal(_ error: any Error) -> PushRefusal { (error as? PushRefusal) ?? .invalidArgument("\(error)") }

    static func apnsError(_ e: PushRefusal, reason: String? = nil) -> Response {
        var fields = [("reason", CompactJSON.string(reason ?? e.apns.reason))]
        if case .unregistered(let since) = e { fields.append(("timestamp", String(Int64(since.timeIntervalSince1970 * 1000)))) }
        return Response(status: .init(code: reason == nil ? e.apns.status : 400), headers: [.contentType: "application/json"],
                        body: .init(byteBuffer: ByteBuffer(string: CompactJSON.object(fields))))
    }

    static func fcmError(_ e: PushRefusal) -> Response {
        let (status, code) = e.fcm
        let detail = CompactJSON.object([("@type", CompactJSON.string("type.googleapis.com/google.firebase.fcm.v1.FcmError")), ("errorCode", CompactJSON.string(code))])
        let error = CompactJSON.object([("code", String(status)), ("message", CompactJSON.string(e.description)), ("status", CompactJSON.string(code == "UNREGISTERED" ? "NOT_FOUND" : code)),
                                     ("details", CompactJSON.array([detail]))])
        return Response(status: .init(code: status), headers: [.contentType: "application/json"],
                        body: .init(byteBuffer: ByteBuffer(string: CompactJSON.object([("error", error)]))))
    }

    static func json(_ fields: [String: String]) -> Response {
        Response(status: .ok, headers: [.contentType: "application/json"], body: .init(byteBuffer: ByteBuffer(string: PushRules.compactJSON(fields))))
    }

    static func jsonText(_ v: Any) -> String {
        guard let d = try? JSONSerialization.data(withJSONObject: v, options: [.fragmentsAllowed, .sortedKeys, .withoutEscapingSlashes]) else { return "" }
        return String(decoding: d, as: UTF8.self)
    }
}
