import AppStoreModels
import Foundation
import KakinWire

/// The web checkout: signed links to a page where a customer pays for an app's product with
/// Stripe, and the payment that page asks for.
///
/// What a purchase made here becomes in Stripe is the contract with what applies Stripe's
/// events: the customer carries `metadata[kakin_app_user_id]` and `metadata[kakin_bundle_id]`;
/// a one-time product's payment intent carries `kakin_app_user_id`, `kakin_product_id`,
/// `kakin_price` and `kakin_quantity` ("1") and the customer; a subscription carries
/// `kakin_app_user_id` and `kakin_product_id`, its one item the configured price.
struct WebCheckout: Sendable {
    /// The service the apps and their customers are read from.
    let service: PurchaseService
    /// The `.storekit` catalog of apps that have none of their own: where a product's name is read.
    var catalog: StoreKitConfiguration?

    /// How a product is paid: once, or by a subscription.
    enum Kind: String, Sendable, Codable {
        /// One payment (a consumable, a non-consumable, a non-renewing subscription).
        case payment
        /// A subscription, renewed by Stripe.
        case subscription
    }

    /// A web product of an app, with its price as Stripe has it.
    struct Offer: Sendable {
        var account: StripeAccount
        var product: StripeAccount.WebProduct
        var price: StripePrice
        var kind: Kind
        /// The amount charged, in the currency's minor units.
        var amount: Int
    }

    /// The app's Stripe account, when it sells on the web: a Stripe account with a publishable key.
    func account(of app: AppConfiguration) throws(ServerError) -> StripeAccount {
        guard let account = app.stripe, account.publishableKey != nil else {
            throw ServerError(
                .notConfigured, "\(app.bundleID) has no web checkout (apps[].stripe with a publishableKey)",
                cause: "checkoutNotConfigured")
        }
        return account
    }

    /// A client of the account's Stripe API, over the service's HTTP exchange.
    func client(_ account: StripeAccount) -> StripeClient {
        StripeClient(secretKey: account.secretKey, baseURL: account.apiBase, exchange: service.exchange)
    }

    /// The web product `productID` of `app` and its price, read from Stripe now.
    ///
    /// - Throws: ``ServerError/Code/notFound`` (cause `unknownProduct`) for a product without a
    ///   web price, or (cause `priceNotFound`) whose price Stripe does not know;
    ///   ``ServerError/Code/notConfigured`` for a price Kakin cannot charge (no fixed amount, or a
    ///   one-time price for an auto-renewable subscription); ``ServerError/Code/appleUnavailable``
    ///   (retryable, cause `stripeUnavailable`) when Stripe does not answer.
    func offer(_ app: AppConfiguration, productID: String) async throws(ServerError) -> Offer {
        let account = try account(of: app)
        guard let product = account.products(for: productID).first else {
            throw ServerError(.notFound, "\(productID) has no web price (apps[].stripe.products)", cause: "unknownProduct")
        }
        let price: StripePrice
        do { price = try await client(account).retrievePrice(product.price) } catch {
            if error.kind == .notFound {
                throw ServerError(.notFound, "Stripe knows no price \(product.price)", cause: "priceNotFound")
            }
            throw Self.unavailable(error)
        }
        guard let amount = price.unitAmount, amount > 0 else {
            throw ServerError(
                .notConfigured, "the price \(price.id) has no fixed amount the checkout can charge", cause: "unusablePrice")
        }
        let type = app.productTypes?[productID] ?? service.productTypes[productID]
        let kind: Kind
        switch type {
        case .autoRenewableSubscription?: kind = .subscription
        case .consumable?, .nonConsumable?, .nonRenewingSubscription?: kind = .payment
        default: kind = price.recurring == nil ? .payment : .subscription
        }
        if kind == .subscription, price.recurring == nil {
            throw ServerError(
                .notConfigured, "\(productID) is a subscription, but its price \(price.id) is paid once",
                cause: "unusablePrice")
        }
        return Offer(account: account, product: product, price: price, kind: kind, amount: amount)
    }

    /// A signed link for `appUserID` to buy `productID` of `app` and return to `returnURL`, to
    /// the page at `origin`, working for 15 minutes.
    ///
    /// - Throws: as ``offer(_:productID:)``; ``ServerError/Code/invalidRequest`` (cause
    ///   `returnURLNotAllowed`) for a return URL outside the account's `returnUrls`;
    ///   ``ServerError/Code/conflict`` (cause `alreadySubscribed`) for a subscription the customer
    ///   already has active.
    func link(
        _ app: AppConfiguration, appUserID: String, productID: String, returnURL: String, origin: String
    ) async throws -> CheckoutLinkAnswer {
        let account = try account(of: app)
        guard account.allowsReturn(to: returnURL) else {
            throw ServerError(
                .invalidRequest, "returnUrl is not under the app's return URLs (apps[].stripe.returnUrls)",
                cause: "returnURLNotAllowed")
        }
        let offer = try await offer(app, productID: productID)
        if offer.kind == .subscription { try await checkNotSubscribed(app, appUserID: appUserID, productID: productID) }
        let link = CheckoutLink(
            bundleID: app.bundleID, appUserID: appUserID, productID: productID, returnURL: returnURL,
            expiresAt: service.realNow().addingTimeInterval(CheckoutLink.lifetime))
        let route = KakinRoute.checkoutPage(app.bundleID)
        guard let base = URL(string: origin),
            let url = route.url(relativeTo: base, query: link.fields(with: CheckoutLink.Key(stripeSecretKey: account.secretKey)))
        else { throw ServerError(.invalidRequest, "the request's Host does not make a URL") }
        return CheckoutLinkAnswer(url: url.absoluteString, expiresAt: link.expiresAt)
    }

    /// The link signed by `fields` for the app `bundleID`, checked: the app sells on the web,
    /// the signature is its, and the link has not expired.
    ///
    /// - Throws: ``ServerError/Code/unknownApp``; ``ServerError/Code/notConfigured``;
    ///   ``ServerError/Code/forbidden`` (cause `incompleteLink` or `forgedLink`) and
    ///   ``ServerError/Code/linkExpired`` (cause `expiredLink`, 410).
    func verify(
        _ fields: [String: String], bundleID: String
    ) throws(ServerError) -> (app: AppConfiguration, link: CheckoutLink, signature: String) {
        let app = try service.app(bundleID)
        let account = try account(of: app)
        do {
            let (link, signature) = try CheckoutLink.verify(
                fields, bundleID: bundleID, key: CheckoutLink.Key(stripeSecretKey: account.secretKey),
                now: service.realNow())
            return (app, link, signature)
        } catch {
            switch error {
            case .expiredLink:
                throw ServerError(.linkExpired, "this checkout link has expired; ask the app for a new one", cause: error.rawValue)
            case .forgedLink, .incompleteLink:
                throw ServerError(.forbidden, "this checkout link is not one this server made", cause: error.rawValue)
            }
        }
    }

    /// The name of `productID` to show: its display name in the app's catalog (for `locale`
    /// when it has one, else the first), else the product ID.
    func productName(_ productID: String, app: AppConfiguration, locale: String) -> String {
        guard let catalog = app.catalog ?? catalog else { return productID }
        let localizations =
            ((catalog.products ?? []) + (catalog.nonRenewingSubscriptions ?? [])).first { $0.productID == productID }?
            .localizations ?? catalog.allSubscriptions.first { $0.productID == productID }?.localizations ?? []
        let language = locale.replacingOccurrences(of: "-", with: "_").lowercased()
        let chosen =
            localizations.first { $0.locale?.lowercased() == language }
            ?? localizations.first { ($0.locale?.lowercased()).map { language.hasPrefix($0.prefix(2)) } ?? false }
            ?? localizations.first
        return chosen?.displayName.flatMap { $0.isEmpty ? nil : $0 } ?? productID
    }

    /// A Stripe failure while paying, as the server answers it: a refused card is the
    /// customer's to fix (402 `paymentDeclined`, with Stripe's message and code); anything else
    /// as ``unavailable(_:)``.
    static func failure(_ error: StripeError) -> ServerError {
        if error.kind == .card {
            return ServerError(.paymentDeclined, error.message, cause: error.declineCode ?? error.code ?? "card_declined")
        }
        return unavailable(error)
    }

    /// Stripe did not answer or refused: retryable, cause `stripeUnavailable`.
    static func unavailable(_ error: StripeError) -> ServerError {
        ServerError(.appleUnavailable, "Stripe could not be reached or refused: \(error)", cause: "stripeUnavailable")
    }
}
