public import Foundation
public import KakinWire

extension KakinServerClient {
    /// Asks the server for a signed link to its web checkout page (`POST /v1/checkout/{bundleId}/links`),
    /// where `appUserID` buys `productID` through the app's Stripe account and is sent back to
    /// `returnURL` once paid. The request carries the publishable key, and `appUserID`'s customer
    /// token where the app has a token provider, as every request about a customer does. The link
    /// works for 15 minutes (`CheckoutLinkAnswer.expiresAt`).
    ///
    /// - Throws: ``KakinError`` with
    ///   - ``KakinError/Code/alreadySubscribed`` (409, cause `alreadySubscribed`) when the customer
    ///     already has the subscription active;
    ///   - ``KakinError/Code/productUnavailable`` (404, cause `unknownProduct` or `priceNotFound`)
    ///     for a product the app does not sell on the web, or whose price Stripe does not know;
    ///   - ``KakinError/Code/webPurchasesUnavailable`` (404, server code `notConfigured`) when the
    ///     server has no web checkout for the app;
    ///   - ``KakinError/Code/notConfigured`` (400, cause `returnURLNotAllowed`) for a return URL
    ///     that is not one of the app's return URLs on the server;
    ///   - otherwise as every request: ``KakinError/Code/network`` and other retryable failures,
    ///     ``KakinError/Code/unauthorized``, ``KakinError/Code/serverRejected``.
    ///
    ///   Each keeps the server's code and cause (``KakinError/serverCode``, ``KakinError/cause``).
    public func checkoutLink(
        productID: String, returnURL: URL, appUserID: String
    ) async throws(KakinError) -> CheckoutLinkAnswer {
        let body = JSONHTTP.encode(
            CheckoutLinkRequest(appUserId: appUserID, productId: productID, returnUrl: returnURL.absoluteString))
        let reply = try await send(.checkoutLinks(bundleID), [:], body: body, for: appUserID)
        do {
            try Self.check(reply)
        } catch {
            throw Self.checkoutFailure(error, status: reply.status)
        }
        return try JSONHTTP.decode(CheckoutLinkAnswer.self, from: reply.body)
    }

    /// The typed error of a refused checkout link: `error` as ``check(_:)`` made it, with the
    /// code that says what the app does about it.
    static func checkoutFailure(_ error: KakinError, status: Int) -> KakinError {
        let code: KakinError.Code
        switch (status, error.serverCode, error.cause) {
        case (409, _, "alreadySubscribed"): code = .alreadySubscribed
        case (404, _, "unknownProduct"), (404, _, "priceNotFound"): code = .productUnavailable
        case (404, "notConfigured", _): code = .webPurchasesUnavailable
        case (400, _, "returnURLNotAllowed"): code = .notConfigured
        default: return error
        }
        return KakinError(
            code, error.message, isRetryable: false, serverCode: error.serverCode, cause: error.cause)
    }
}
