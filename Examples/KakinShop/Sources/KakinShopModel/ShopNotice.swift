public import Kakin

/// A one-line message the shop shows after an action: what happened, or why it did not.
public enum ShopNotice: Hashable, Sendable {
    /// Paid, and the purchase server granted it.
    case purchased(productName: String)
    /// Paid, but the purchase server has not acknowledged it yet: the SDK keeps it in its outbox
    /// and delivers it on its own, so nothing is lost.
    case awaitingServer(productName: String)
    /// Waiting for approval (ask to buy) or for the customer to complete it.
    case pending(productName: String)
    /// Purchases were restored.
    case restored
    /// Signed in as an app user ID.
    case loggedIn(String)
    /// Signed out: the shop continues with a new anonymous customer.
    case loggedOut
    /// An offer code was redeemed; what it unlocks arrives through the store's updates.
    case offerCodeRedeemed
    /// An action failed, as the SDK reports it.
    case failed(PaymentError)
    /// Something else failed (the content of a product could not be asked for, say), in words.
    case problem(String)

    /// Whether it reports a failure.
    public var isError: Bool {
        switch self {
        case .failed, .problem: true
        default: false
        }
    }

    /// The message, in English.
    public var message: String {
        switch self {
        case .purchased(let name): "\(name) is yours."
        case .awaitingServer(let name): "Purchase of \(name) received; it will be unlocked shortly."
        case .pending(let name): "\(name) is waiting for approval."
        case .restored: "Your purchases were restored."
        case .loggedIn(let user): "Signed in as \(user)."
        case .loggedOut: "Signed out."
        case .offerCodeRedeemed: "Your offer code was redeemed."
        case .failed(let error): Self.message(for: error)
        case .problem(let text): text
        }
    }

    /// What to tell the customer about `error`, following the SDK's advice
    /// (``PaymentError/isRetryable`` means "try again later").
    static func message(for error: PaymentError) -> String {
        switch error {
        case .paymentMethodRequired: return "Add a payment method to your Apple Account, then try again."
        case .notAllowed: return "Purchases are not allowed on this device."
        case .productUnavailable: return "This product is not for sale in your country or region."
        case .ineligibleForOffer: return "This offer is not available to you."
        case .invalidOffer, .invalidOfferSignature: return "This offer cannot be used right now."
        case .purchasedByAnotherAccount:
            return "This purchase belongs to another account. Restore purchases while signed in to the Apple Account that bought it."
        case .invalidAppUserID: return "That user name cannot be used."
        case .notLoggedIn: return "Nobody is signed in."
        case .cancelled: return "Cancelled."
        default:
            return error.isRetryable
                ? "The store cannot be reached. Try again in a moment."
                : "Something went wrong: \(error)."
        }
    }
}
