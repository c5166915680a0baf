import Hummingbird
import TrustCore

/// The trust API's request context: Hummingbird's core storage, plus the claims of the access
/// token once `BearerAuthentication` has checked it (nil on the routes that take no token).
public struct TrustRequestContext: RequestContext {
    public var coreContext: CoreRequestContextStorage
    /// The verified access token's claims (its subject is the device).
    public var claims: AccessClaims?

    public init(source: Source) {
        coreContext = .init(source: source)
    }

    /// Said when a route behind `BearerAuthentication` finds no claims (a routing mistake,
    /// answered 401 rather than trapping).
    static let noToken = "this route needs a Bearer token"
}
