public import AppStoreModels
public import Foundation

/// An app's Stripe account, for purchases made on the web beside the App Store's
/// (`apps[].stripe`): the key the server calls Stripe's API with, the secrets Stripe signs the
/// account's webhooks with, and the web products, each the Stripe price of an App Store product
/// whose grants it shares.
public struct StripeAccount: Sendable, Equatable {
    /// One web product: the Stripe price a customer pays on the web for what an App Store product
    /// gives.
    public struct WebProduct: Sendable, Hashable {
        /// The App Store product whose grants and entitlements the web purchase shares.
        public var productID: String
        /// The Stripe price the checkout charges (`price_…`; a plan's ID is accepted where a price's is).
        public var price: String

        /// A web product selling `price` for what `productID` gives.
        public init(productID: String, price: String) {
            self.productID = productID
            self.price = price
        }
    }

    /// The secret key (`sk_live_…`, `sk_test_…`) or restricted key (`rk_…`) of the account.
    public var secretKey: String
    /// The signing secrets of the account's webhook endpoint (`whsec_…`): a webhook is accepted
    /// when signed with any of them, so that a secret can be rolled without a refusal.
    public var webhookSecrets: [String]
    /// Where Stripe's API is: `https://api.stripe.com`, or an emulator's address in tests.
    public var apiBase: URL
    /// The web products, each an App Store product's Stripe price.
    public var products: [WebProduct]

    /// An account with its key, webhook secrets, web products and API address, checked as
    /// ``check()`` says.
    public init(
        secretKey: String, webhookSecrets: [String], products: [WebProduct] = [],
        apiBase: URL = URL(string: "https://api.stripe.com")!
    ) {
        self.secretKey = secretKey
        self.webhookSecrets = webhookSecrets
        self.products = products
        self.apiBase = apiBase
    }

    /// The environment the account's purchases are recorded in: Sandbox for a test-mode key,
    /// Production for a live one, as the App Store's are.
    public var environment: AppStoreEnvironment {
        secretKey.hasPrefix("sk_test_") || secretKey.hasPrefix("rk_test_") ? .sandbox : .production
    }

    /// Whether events of this mode belong to the account (Stripe's `livemode`).
    public func accepts(livemode: Bool) -> Bool { livemode == (environment == .production) }

    /// The web product sold at `price`, if any.
    public func product(price: String) -> WebProduct? { products.first { $0.price == price } }

    /// The web products of the App Store product `productID`: one price, or one per currency.
    public func products(for productID: String) -> [WebProduct] { products.filter { $0.productID == productID } }

    /// Why the account cannot be used, or `nil`: a key that is not a secret or restricted key, no
    /// webhook secret or one that is not a signing secret, or a price named twice.
    public func check() -> String? {
        let keyPrefixes = ["sk_live_", "sk_test_", "rk_live_", "rk_test_"]
        guard keyPrefixes.contains(where: secretKey.hasPrefix) else {
            return "secretKey: expected a secret or restricted key (sk_live_, sk_test_, rk_live_ or rk_test_…)"
        }
        guard !webhookSecrets.isEmpty else { return "webhookSecrets: at least one signing secret is needed" }
        if let secret = webhookSecrets.first(where: { !$0.hasPrefix("whsec_") || $0.count < 12 }) {
            return "webhookSecrets: \(secret.prefix(6))… is not a webhook signing secret (whsec_…)"
        }
        guard apiBase.scheme == "https" || apiBase.host == "127.0.0.1" || apiBase.host == "localhost" else {
            return "apiBase: Stripe's API is reached over HTTPS (plain HTTP only on this machine, for an emulator)"
        }
        var prices = Set<String>()
        for product in products {
            guard !product.price.isEmpty, !product.productID.isEmpty else {
                return "products: each needs a productId and a price"
            }
            guard prices.insert(product.price).inserted else { return "products: the price \(product.price) is named twice" }
        }
        return nil
    }
}
