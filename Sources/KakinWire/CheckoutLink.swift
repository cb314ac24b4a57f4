public import Foundation

/// `POST /v1/checkout/{bundleId}/links`: a link to the web checkout page for one customer and
/// product (publishable key, and the customer's token where the app requires one).
public struct CheckoutLinkRequest: Codable, Hashable, Sendable {
    /// The app's customer the purchase is for.
    public var appUserId: String
    /// The App Store product to buy on the web (one of the app's web products).
    public var productId: String
    /// Where the page sends the customer once paid, with `status=succeeded&product=<id>` added
    /// to its query: one of the app's configured return URLs, or under one.
    public var returnUrl: String

    /// A request for a link for `appUserId` to buy `productId` and come back to `returnUrl`.
    public init(appUserId: String, productId: String, returnUrl: String) {
        self.appUserId = appUserId
        self.productId = productId
        self.returnUrl = returnUrl
    }
}

/// The answer to a ``CheckoutLinkRequest``: the signed link, and when it stops working.
public struct CheckoutLinkAnswer: Codable, Hashable, Sendable {
    /// The checkout page's URL, signed by the server.
    public var url: String
    /// When the link stops working (15 minutes after it was made); milliseconds since 1970 on
    /// the wire, as every date of the API.
    public var expiresAt: Date

    /// An answer with the link `url`, working until `expiresAt`.
    public init(url: String, expiresAt: Date) {
        self.url = url
        self.expiresAt = expiresAt
    }
}

/// The answer of `POST /checkout/{bundleId}/pay`: what the checkout page confirms with Stripe.js.
public struct CheckoutPayment: Codable, Hashable, Sendable {
    /// `payment` (a payment intent), `subscription` (the payment intent of a subscription's
    /// first invoice) or `setup` (a trialing subscription: nothing to pay now, a setup intent
    /// saves the card when Stripe made one).
    public var kind: String
    /// The secret Stripe.js confirms with; `nil` when there is nothing left to confirm.
    public var clientSecret: String?
    /// Where the payment stands, as Stripe says (`requires_payment_method`, `succeeded`,
    /// `trialing`…).
    public var status: String?

    /// A payment of `kind`, confirmed with `clientSecret`, standing at `status`.
    public init(kind: String, clientSecret: String?, status: String?) {
        self.kind = kind
        self.clientSecret = clientSecret
        self.status = status
    }
}
