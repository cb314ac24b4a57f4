import KakinLedger
public import Hummingbird
public import NIOCore

/// The request context of the purchase server's routes: Hummingbird's core context, the address
/// the request came from, and who its key says is calling (found once, by the key middleware,
/// before any route runs).
public struct KakinRequestContext: RequestContext, RemoteAddressRequestContext {
    public var coreContext: CoreRequestContextStorage
    /// The peer's address (`nil` in in-process tests).
    public let remoteAddress: SocketAddress?
    /// The apps whose key the request presented; `nil` until the key middleware ran.
    var keys: PresentedKeys?

    public init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        remoteAddress = source.channel.remoteAddress
    }

    /// The caller, for a route that takes the app's publishable key (`X-Kakin-Key`, or
    /// `Authorization: Bearer pk_…`; the secret key works too), or the secret key alone when
    /// `secret` is true (`Authorization: Bearer sk_…`). 401 without a key that matches; 429 when
    /// the request's address must wait after wrong keys and presented more than a publishable key.
    func caller(secret: Bool) throws(ServerError) -> KakinServerHTTP.Caller {
        if let refusal = keys?.refusal { throw refusal }
        let matched = secret ? keys?.secret : keys?.publishable
        guard let matched, !matched.isEmpty else {
            throw ServerError(
                .unauthorized,
                secret
                    ? "this call needs the secret key (Authorization: Bearer sk_…)"
                    : "this call needs the app's key (X-Kakin-Key)")
        }
        return KakinServerHTTP.Caller(bundleIDs: matched, secretBundleIDs: keys?.secret ?? [])
    }
}

/// The apps a request's keys belong to.
struct PresentedKeys: Sendable {
    /// Apps whose publishable or secret key is `X-Kakin-Key` (or, without it, the bearer token).
    var publishable: Set<String>
    /// Apps whose secret key is the bearer token.
    var secret: Set<String>
    /// Set when the request's address must wait after wrong keys and the request presented more
    /// than a publishable key: what every keyed route answers instead.
    var refusal: ServerError?
}
