import Foundation
import KakinLedger
import HTTPTypes
import Hummingbird
import KakinWire

/// Finds, once per request and before any route runs, which apps the request's keys belong to,
/// and puts them in the request context; each route then asks the context for the caller it needs.
///
/// A key that matches nothing counts as a failed sign-in of the request's address (see
/// ``SignInThrottle``). While that address must wait, a keyed route asked with anything but a
/// publishable key answers 429 without the key being checked.
///
/// A request whose key is only a publishable one takes a token from its client address's bucket
/// for its kind (``ClientRateLimiter``); with none left it is answered 429 `rateLimited` with
/// `Retry-After`, before its body is read.
struct KeyMiddleware: RouterMiddleware {
    typealias Context = KakinRequestContext
    let apps: [AppConfiguration]
    let throttle: SignInThrottle
    let limiter: ClientRateLimiter

    @concurrent func handle(
        _ request: Request, context: KakinRequestContext,
        next: @concurrent (Request, KakinRequestContext) async throws -> Response
    ) async throws -> Response {
        let header = request.headers[HTTPField.Name(KakinHeader.publishableKey)!].flatMap { $0.isEmpty ? nil : $0 }
        let bearer = request.headers[.authorization].flatMap {
            $0.hasPrefix("Bearer ") && $0.count > 7 ? String($0.dropFirst(7)) : nil
        }
        guard header != nil || bearer != nil else { return try await next(request, context) }

        let fromHeader = header.map(apps(matching:))
        let fromBearer = bearer == header ? fromHeader : bearer.map(apps(matching:))
        var keys = PresentedKeys(
            publishable: (fromHeader ?? fromBearer)?.any ?? [], secret: fromBearer?.secret ?? [], refusal: nil)
        let presented = [fromHeader, fromBearer].compactMap { $0 }
        // Publishable keys ship inside apps: presenting one guesses nothing, so it is never held up.
        if !presented.allSatisfy({ $0.secret.isEmpty && !$0.any.isEmpty }) {
            let source = throttle.source(of: request, peer: context.remoteAddress)
            if let learned = throttle.learnedLockedUntil([source]) {
                // Confirmed with the ledger, where an operator may have cleared the wait.
                let until: Date?
                do { until = try await throttle.lockedUntil([source]) } catch { until = learned }
                if let until { keys.refusal = throttle.refused([source], kind: .api, until: until) }
            }
            if keys.refusal == nil, presented.contains(where: { $0.any.isEmpty }) {
                await throttle.failed([source], kind: .api)
            }
        }
        if keys.secret.isEmpty, !keys.publishable.isEmpty,
            let kind = RateLimitPolicy.kind(method: request.method, path: request.uri.path),
            let wait = limiter.take(kind, client: throttle.source(of: request, peer: context.remoteAddress).key)
        {
            throttle.metrics.rateLimited(kind: kind.rawValue)
            throw ServerError(
                .rateLimited, "too many requests from this address; wait \(wait) s", retryAfterSeconds: wait)
        }
        var context = context
        context.keys = keys
        return try await next(request, context)
    }

    /// The apps whose secret key `key` is, and those whose secret or publishable key it is,
    /// compared in constant time with every app's keys.
    private func apps(matching key: String) -> (secret: Set<String>, any: Set<String>) {
        var secret: Set<String> = []
        var any: Set<String> = []
        for app in apps {
            let isSecret = KakinServerHTTP.constantTimeEquals(key, app.secretKey)
            if isSecret { secret.insert(app.bundleID) }
            if isSecret || KakinServerHTTP.constantTimeEquals(key, app.publicKey) { any.insert(app.bundleID) }
        }
        return (secret, any)
    }
}
