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

    /// The token of `Authorization: Bearer TOKEN` (the scheme in any case, RFC 6750 §2.1), spaces
    /// and tabs around it dropped. Read as bytes: every request with a token comes through here, and
    /// Foundation's `trimmingCharacters` (a round trip through UTF-16) cost more than the rest of the
    /// bearer check with its cached signature.
    static func bearer(_ request: Request) throws(TrustError) -> String {
        guard let h = request.headers[.authorization] else { throw TrustError(.invalidToken, "no Authorization header (Bearer token)") }
        let bytes = h.utf8
        let scheme = bytes.prefix(7)
        guard scheme.count == 7, zip(scheme, "bearer ".utf8).allSatisfy({ $0 | (($0 >= 0x41 && $0 <= 0x5A) ? 0x20 : 0) == $1 }) else {
            throw TrustError(.invalidToken, "Authorization is not a Bearer token")
        }
        func blank(_ b: UInt8) -> Bool { b == 0x20 || b == 0x09 }
        var token = bytes.dropFirst(7)
        while let b = token.first, blank(b) { token = token.dropFirst() }
        while let b = token.last, blank(b) { token = token.dropLast() }
        return String(Substring(token))
    }

    /// 401 with the challenge RFC 6750 §3 describes; the description also in the JSON body.
    static func unauthorized(_ message: String) -> Response {
        let quoted = message.replacingOccurrences(of: "\"", with: "'").replacingOccurrences(of: "\\", with: "/")
        return Response(status: .unauthorized,
                        headers: [.wwwAuthenticate: "Bearer error=\"invalid_token\", error_description=\"\(quoted)\""],
                        body: TrustAPI.jsonBody(["error": "invalid_token", "error_description": message]))
    }
}
