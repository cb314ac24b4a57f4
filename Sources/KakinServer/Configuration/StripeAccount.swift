public import AppStoreModels
public import Foundation

/// An app's Stripe account, for purchases made on the web beside the App Store's
/// (`apps[].stripe`): the key the server calls Stripe's API with, the secrets Stripe signs the
/// account's webhooks with, the web products, each the Stripe price of an App Store product
/// whose grants it shares, and what the web checkout needs: the publishable key its page hands
/// to Stripe.js and the addresses a checkout may return to.
public struct StripeAccount: Sendable, Equatable {
    /// One web product: the Stripe price a customer pays on the web for what an App Store product
    /// gives.
    public struct WebProduct: Sendable, Hashable {
        /// The App Store product whose grants and entitlements the web purchase shares.
        public var productID: String
        /// The Stripe price the checkout charges (`price_…`; a plan's ID is accepted where a price's is).
        public var price: String
        /// For a subscription, the days of free trial the checkout starts it with; `nil` for none.
        public var trialDays: Int?

        /// A web product selling `price` for what `productID` gives, with `trialDays` of free trial
        /// for a subscription.
        public init(productID: String, price: String, trialDays: Int? = nil) {
            self.productID = productID
            self.price = price
            self.trialDays = trialDays
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
    /// The publishable key of the account (`pk_live_…`, `pk_test_…`), of the secret key's mode:
    /// the checkout page hands it to Stripe.js, which collects the card. Public by design; `nil`
    /// leaves the web checkout off.
    public var publishableKey: String?
    /// The addresses a checkout may send the customer back to once paid: each a prefix, such as
    /// `myapp://checkout` or `https://example.com/done`. A return URL is accepted when it is one
    /// of them, or continues one of them with a `/`, `?` or `#`.
    public var returnURLs: [String]

    /// An account with its key, webhook secrets, web products and API address, and the web
    /// checkout's publishable key and return addresses, checked as ``check()`` says.
    public init(
        secretKey: String, webhookSecrets: [String], products: [WebProduct] = [],
        apiBase: URL = URL(string: "https://api.stripe.com")!, publishableKey: String? = nil, returnURLs: [String] = []
    ) {
        self.secretKey = secretKey
        self.webhookSecrets = webhookSecrets
        self.products = products
        self.apiBase = apiBase
        self.publishableKey = publishableKey
        self.returnURLs = returnURLs
    }

    /// Whether the account reaches Stripe's own API host (and not an emulator).
    public var isStripeHost: Bool { apiBase.host == "api.stripe.com" }

    /// Where the checkout page loads Stripe.js from: Stripe's `https://js.stripe.com/v3/`, or the
    /// stand-in an emulator serves at `<apiBase>/js.stripe.com/v3/`.
    public var stripeJSURL: URL {
        guard !isStripeHost else { return URL(string: "https://js.stripe.com/v3/")! }
        var text = apiBase.absoluteString
        while text.hasSuffix("/") { text.removeLast() }
        return URL(string: text + "/js.stripe.com/v3/")!
    }

    /// Whether a checkout may return to `url`: it parses as an absolute URL, and is one of
    /// ``returnURLs`` or continues one with `/`, `?` or `#` (so that `https://example.com` does
    /// not let `https://example.com.evil.test` through).
    public func allowsReturn(to url: String) -> Bool {
        guard url.count <= 2048, let parsed = URL(string: url), parsed.scheme != nil,
            !url.contains(where: { $0.isNewline || $0 == " " })
        else { return false }
        return returnURLs.contains { prefix in
            guard url.hasPrefix(prefix) else { return false }
            if url.count == prefix.count || prefix.hasSuffix("/") { return true }
            let next = url[url.index(url.startIndex, offsetBy: prefix.count)]
            return next == "/" || next == "?" || next == "#"
        }
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
    /// webhook secret or one that is not a signing secret, a price named twice, a publishable key
    /// that is not one or is of the other mode than the secret key, a return URL that is not an
    /// absolute URL, or a trial outside 1 to 730 days.
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
            if let days = product.trialDays, !(1...730).contains(days) {
                return "products: trialDays of \(product.price) is \(days); expected 1 to 730"
            }
        }
        if let publishableKey {
            let mode = environment == .sandbox ? "pk_test_" : "pk_live_"
            guard publishableKey.hasPrefix("pk_test_") || publishableKey.hasPrefix("pk_live_") else {
                return "publishableKey: expected a publishable key (pk_live_ or pk_test_…)"
            }
            guard publishableKey.hasPrefix(mode) else {
                return "publishableKey: a \(mode)… key is needed, of the secret key's mode"
            }
        }
        for prefix in returnURLs {
            guard let url = URL(string: prefix), let scheme = url.scheme, !scheme.isEmpty,
                prefix.count > scheme.count + 1, !prefix.contains(where: { $0.isNewline || $0 == " " })
            else { return "returnUrls: \(prefix) is not an absolute URL (myapp://checkout, https://example.com/done)" }
        }
        return nil
    }
}
