public import Foundation

/// A signed link to the purchase server's web checkout page, for one customer and product.
public struct WebCheckoutLink: Hashable, Sendable {
    /// The checkout page: the app opens it in the browser (SwiftUI's `openURL`, UIKit's
    /// `UIApplication.open(_:)`), after showing its own disclosure.
    public var url: URL
    /// When the link stops working (15 minutes after the server made it): ask for a new one
    /// past it.
    public var expiresAt: Date

    /// A link to `url`, working until `expiresAt`.
    public init(url: URL, expiresAt: Date) {
        self.url = url
        self.expiresAt = expiresAt
    }
}

extension KakinStore {
    /// Whether the app may offer web purchases on the storefront `countryCode` (ISO 3166-1
    /// alpha-3, any case): it is one of ``webPurchaseStorefronts``. No storefront, none.
    public func allowsWebPurchases(onStorefront countryCode: String?) -> Bool {
        guard let countryCode else { return false }
        let code = countryCode.uppercased()
        return webPurchaseStorefronts.contains { $0.uppercased() == code }
    }

    /// Whether the app may offer web purchases to this device now: the store's storefront
    /// (StoreKit's `Storefront.current`) is one of ``webPurchaseStorefronts``. For deciding
    /// whether to show a web purchase button at all.
    public func webPurchasesAvailable() async -> Bool {
        allowsWebPurchases(onStorefront: await session.backend.storefrontCountryCode())
    }

    /// A signed link for the current customer (``appUserID``) to buy `productID` on the web,
    /// through the app's Stripe account, and come back to the app at `returnURL` once paid.
    ///
    /// The app shows its own disclosure, then opens ``WebCheckoutLink/url`` in the browser; the
    /// SDK never opens it. The page sends the customer back to `returnURL` with
    /// `status=succeeded&product=<id>` added to its query; the app then calls
    /// ``handleWebCheckoutReturn(_:)``. `returnURL` must be one of the app's return URLs on the
    /// server (`apps[].stripe.returnUrls`), or under one.
    ///
    /// Asked of the server only where the device's App Store storefront is one of
    /// ``webPurchaseStorefronts``; elsewhere, or when the store cannot say which storefront it is,
    /// ``KakinError/Code/webPurchasesUnavailable`` is thrown and nothing is sent. The server
    /// refuses a subscription the customer already has active
    /// (``KakinError/Code/alreadySubscribed``), so the customer never pays twice for it, whichever
    /// store sold the first one. Other refusals are as
    /// ``KakinServerClient/checkoutLink(productID:returnURL:appUserID:)`` says.
    public func webCheckoutLink(for productID: String, returnURL: URL) async throws(KakinError) -> WebCheckoutLink {
        let storefront = await session.backend.storefrontCountryCode()
        guard allowsWebPurchases(onStorefront: storefront) else {
            throw KakinError(
                .webPurchasesUnavailable,
                "web purchases are not offered on the storefront \(storefront ?? "(none)"): the app offers them on "
                    + "\(webPurchaseStorefronts.sorted().joined(separator: ", "))")
        }
        let answer = try await server.checkoutLink(productID: productID, returnURL: returnURL, appUserID: appUserID)
        guard let url = URL(string: answer.url) else {
            throw KakinError(.invalidResponse, "the server's checkout link is not a URL: \(answer.url)")
        }
        return WebCheckoutLink(url: url, expiresAt: answer.expiresAt)
    }

    /// Reads the customer from the server when the web checkout sent the customer back to the
    /// app (the app's return URL opened), publishes it in ``customerInfo``, and returns it.
    ///
    /// `url` is the return URL as it opened; its query (`status`, `product`) is not trusted, since
    /// anyone can open it: what the customer has is the server's signed answer. The server grants
    /// a web purchase when Stripe's event about the payment reaches it, usually within seconds
    /// of the return; an entitlement not there yet arrives with a later
    /// ``refreshCustomerInfo()``. A web purchase's entitlement says `Entitlement.store`
    /// `stripe`, and its `Entitlement.management` is
    /// ``EntitlementManagement/web(_:)``.
    ///
    /// - Throws: ``KakinError`` when the server cannot be reached or refuses (no answer computed
    ///   on the device stands in: it would not know of the web purchase).
    @discardableResult
    public func handleWebCheckoutReturn(_ url: URL) async throws(KakinError) -> CustomerInfo {
        let asked = appUserID
        let customer: CustomerInfo
        do {
            customer = try await payments.customerInfo(allowOffline: false)
        } catch {
            throw error as? KakinError ?? KakinError(.network, "\(error)")
        }
        if appUserID == asked { publish(customer) }
        return customer
    }
}
