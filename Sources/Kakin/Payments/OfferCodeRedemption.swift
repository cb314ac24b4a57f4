/// What the store's offer code redemption sheet came to (``StoreBackend/presentOfferCodeRedeemSheet()``).
///
/// StoreKit returns the transaction a redemption made since iOS 27, macOS 27 and visionOS 27
/// (`AppStore.presentOfferCodeRedeemSheet(from:options:)`); before, its sheet says nothing, and a
/// redeemed code arrives later as one of the store's updates.
public enum OfferCodeRedemption: Hashable, Sendable {
    /// The customer redeemed a code; the store made this transaction, which must be delivered to
    /// the server and then finished, as a purchase's is.
    case redeemed(StoreTransaction)
    /// The sheet closed and the store did not say what happened (StoreKit before iOS 27): a code the
    /// customer redeemed arrives as an update, which the SDK delivers by itself.
    case closed
    /// The customer closed the sheet without redeeming a code.
    case cancelled
}

/// What redeeming an offer code came to, after the SDK delivered what it bought
/// (``PaymentManager/redeemOfferCode()``, ``KakinStore/redeemOfferCode()``).
public enum OfferCodeRedemptionOutcome: Hashable, Sendable {
    /// Redeemed and delivered. `customer` is the server's answer, or `nil` when the server could
    /// not be reached yet (the transaction is queued, delivered later, and only then finished).
    case redeemed(StoreTransaction, customer: CustomerInfo?)
    /// The sheet closed without saying what happened (StoreKit before iOS 27): a redeemed code
    /// arrives through the store's updates and is delivered then.
    case closed
    /// The customer closed the sheet without redeeming a code.
    case cancelled
}
