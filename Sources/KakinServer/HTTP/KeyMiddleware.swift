import Foundation
import HTTPTypes
import Hummingbird
import KakinWire

/// Finds, once per request and before any route runs, which apps the request's keys belong to,
/// and puts them in the request context; each route then asks the context for the caller it needs.
///
/// A key that matches nothing counts as a failed sign-in of the request's address (see
/// ``SignInThrottle``). While that address must wait, a keyed route asked with anything but a
/// publishable key answers 429 without the key being checked.
struct KeyMiddleware: RouterMiddleware {
    typealias Context = KakinRequestContext
    let apps: [AppConfiguration]
    let throttle: SignInThrottle

    @concurrent func handle(
        _ request: Request, context: KakinRequestContext,
        next: @concurrent (Request, KakinRequestContext) async throws -> Response
    ) async throws -> Response {
        let bearer = request.headers[.authorization].flatMap {
            $0.hasPrefix("Bearer ") ? String($0.dropFirst(7)) : nil
        }
        let header = request.headers[HTTPField.Name(KakinHeader.publishableKey)!].flatMap { $0.isEmpty ? nil : $0 }
        guard bearer?.isEmpty == false || header != nil else { return try await next(request, context) }

        var keys = PresentedKeys(publishable: [], secret: [], refusal: nil)
        var onlyPublishable = true
        var wrong = false
        for presented in [header, bearer].compactMap({ $0 }) where !presented.isEmpty {
            var matchedAny = false
            for app in apps {
                let isSecret = KakinServerHTTP.constantTimeEquals(presented, app.secretKey)
                let isPublic = KakinServerHTTP.constantTimeEquals(presented, app.publicKey)
                if isSecret { onlyPublishable = false }
                matchedAny = matchedAny || isSecret || isPublic
                if presented == (header ?? bearer), isSecret || isPublic { keys.publishable.insert(app.bundleID) }
                if presented == bearer, isSecret { keys.secret.insert(app.bundleID) }
            }
            if !matchedAny {
                wrong = true
                onlyPublishable = false
            }
        }
        if !onlyPublishable {
            let source = throttle.source(of: request, peer: context.remoteAddress)
            if let learned = throttle.learnedLockedUntil([source]) {
                // Confirmed with the ledger, where an operator may have cleared the wait.
                let until: Date?
                do { until = try await throttle.lockedUntil([source]) } catch { until = learned }
                if let until { keys.refusal = throttle.refused([source], kind: .api, until: until) }
            }
            if wrong, keys.refusal == nil { await throttle.failed([source], kind: .api) }
        }
        var context = context
        context.keys = keys
        return try await next(request, context)
    }
}
