import Foundation
import Hummingbird
import TrustCore
import TrustModel

/// The one bearer check of the trust API (RFC 6750): the `Authorization: Bearer` header, the
/// token's signature and claims (`TokenAuthority.verify`), and that its login (token family) was not
/// revoked. The claims go into the request context; a refusal is 401 `invalid_token` with a
/// `WWW-Authenticate` challenge naming why.
public struct BearerAuthentication: RouterMiddleware {
    public typealias Context = TrustRequestContext

    /// Where the login's liveness is read. A poll reads it in the same snapshot as the keys it
    /// answers with (one read per poll, `TrustService.poll(family:)`); every other route here.
    public enum Login: Sendable { case checkedHere, checkedByHandler }

    let service: TrustService
    let login: Login

    public init(service: TrustService, login: Login = .checkedHere) {
        self.service = service
        self.login = login
    }

    public func handle(_ request: Request, context: Context,
                       next: (Request, Context) async throws -> Response) async throws -> Response {
        var context = context
        do {
            let token = try Self.bearer(request)
            context.claims = switch login {
            case .checkedHere: try await service.authorize(bearer: token)
            case .checkedByHandler: try await service.tokens.verify(token, now: service.now())
            }
        } catch let e as TrustError {
            return Self.unauthorized(e.message)
        }
        return try await next(request, context)
    }

    static func bearer(_ request: Request) throws(TrustError) -> String {
        guard let h = request.headers[.authorization] else { throw TrustError(.invalidToken, "no Authorization header (Bearer token)") }
        let parts = h.split(separator: " ", maxSplits: 1)
        guard parts.count == 2, parts[0].lowercased() == "bearer" else { throw TrustError(.invalidToken, "Authorization is not a Bearer token") }
        return String(parts[1]).trimmingCharacters(in: .whitespaces)
    }

    /// 401 with the challenge RFC 6750 §3 describes; the description also in the JSON body.
    static func unauthorized(_ message: String) -> Response {
        let quoted = message.replacingOccurrences(of: "\"", with: "'").replacingOccurrences(of: "\\", with: "/")
        return Response(status: .unauthorized,
                        headers: [.wwwAuthenticate: "Bearer error=\"invalid_token\", error_description=\"\(quoted)\""],
                        body: TrustAPI.jsonBody(["error": "invalid_token", "error_description": message]))
    }
}
