import Foundation

/// Where a payment flow is: the classic payment states, extended where StoreKit has more.
public enum PaymentStatus: Hashable, Sendable {
    /// Product information arrived (delegates also get it through `responseProductInfo`).
    case productInfoReceived(products: [StoreProduct], invalid: [InvalidProduct])
    /// A purchase started; the app should block its purchase UI until the purchase ends.
    case purchasing(productID: String)
    /// Paid and acknowledged by the server; the transaction is finished.
    case purchased(StoreTransaction)
    /// Paid, but the server has not acknowledged it yet; it stays queued and is retried.
    case awaitingServer(StoreTransaction)
    /// Waiting for approval (ask to buy).
    case deferred(productID: String)
    /// The purchase failed (the error says why; a cancel is ``PaymentError/cancelled``).
    case failed(productID: String, error: PaymentError)
    /// A restored transaction, acknowledged by the server.
    case restored(StoreTransaction)
    /// Restore finished.
    case restoreFinished
}

/// Why a payment flow failed: the classic payment errors, extended with StoreKit's other cases.
///
/// Every error StoreKit 2 throws (`Product.PurchaseError`, `StoreKitError`) arrives as one of these
/// cases; ``isRetryable`` says whether the same request can succeed later without anything
/// changing. A customer who cancels is not a failure: a purchase returns
/// ``PurchaseOutcome/cancelled`` and a restore restores nothing.
public enum PaymentError: Error, Hashable, Sendable {
    /// Products could not be loaded from the store.
    case productInfoFailed
    /// The client may not make the payment, or the app lacks the entitlement StoreKit needs (SKError
    /// code 1, `clientInvalid`; StoreKit's `notEntitled`).
    case clientInvalid
    /// The customer cancelled the payment (SKError code 2, `paymentCancelled`; StoreKit's
    /// `userCancelled`).
    case cancelled
    /// The store refused the payment's parameters: a quantity it does not take, a product the
    /// operation does not support (SKError code 3, `paymentInvalid`).
    case invalidPayment
    /// The account may not buy, e.g. because of parental restrictions (SKError code 4,
    /// `paymentNotAllowed`).
    case notAllowed
    /// The product is not for sale in this storefront (SKError code 5, `storeProductNotAvailable`).
    case productUnavailable
    /// The store could not restore purchases.
    case restoreFailed
    /// The store or the server could not be reached; a queued transaction is retried later.
    case network
    /// The server refused the transaction for good; the error carries the server's code and cause.
    case serverRejected(KakinError)
    /// The store does not know the offer, or its parameters are missing or wrong (SKError 11, 13, 14).
    case invalidOffer
    /// The store found the offer's signature bad, too old or used before (SKError 12).
    case invalidOfferSignature
    /// The customer may not have the offer (SKError 18).
    case ineligibleForOffer
    /// The customer must add a payment method to their Apple Account before buying (SKError 21,
    /// StoreKit's `paymentMethodBindingConfigurationRequired`).
    case paymentMethodRequired
    /// The store failed on its own (a system error, or one it does not explain), with its
    /// description; trying again later usually works (SKError code 0, `unknown`).
    case storeFailure(String)
    /// ``KakinStore/logIn(_:)`` was given an ID that cannot name a signed-in user (empty, or
    /// anonymous: `$kakin_anon_…`); checked on the device, before anything is sent.
    case invalidAppUserID(String)
    /// ``KakinStore/logOut()`` was called while the customer is anonymous: nobody is logged in.
    case notLoggedIn
    /// The purchase server needs a customer token for this signed-in customer and has no valid
    /// one: the app's ``CustomerTokenProvider`` failed, or the server refused its token (the error
    /// says which; ``KakinError/Code/unauthorized``). Retryable: a purchase stays queued and is
    /// delivered once a token can be had.
    case unauthorized(KakinError)
    /// The purchase belongs to another customer, and nothing showed that this device is signed in
    /// to the Apple Account that bought it (the server's 409 `purchasedByAnotherAccount`;
    /// ``KakinError/Code/purchasedByAnotherAccount``). The customer restores purchases on a device
    /// signed in to the Apple Account that bought it; the transaction is kept on the device, not
    /// retried by itself, and tried again by the next restore.
    case purchasedByAnotherAccount
    /// Any other failure, with its description.
    case unknown(String)

    /// Maps an SDK error (and the store's SKError code it may carry) to one of these cases.
    public init(_ error: any Error) {
        if let error = error as? PaymentError {
            self = error
            return
        }
        guard let error = error as? KakinError else {
            self = .unknown("\(error)")
            return
        }
        switch error.code {
        case .network: self = .network
        case .serverRejected, .tamperedResponse: self = .serverRejected(error)
        case .unauthorized: self = .unauthorized(error)
        case .purchasedByAnotherAccount: self = .purchasedByAnotherAccount
        case .productUnavailable: self = .productUnavailable
        case .storeFailure:
            switch error.storeKitCode {
            case 0: self = .storeFailure(error.message)
            case 1: self = .clientInvalid
            case 2: self = .cancelled
            case 3: self = .invalidPayment
            case 4: self = .notAllowed
            case 5: self = .productUnavailable
            case 11, 13, 14: self = .invalidOffer
            case 12: self = .invalidOfferSignature
            case 18: self = .ineligibleForOffer
            case 21: self = .paymentMethodRequired
            default: self = .unknown(error.message)
            }
        default: self = .unknown(error.message)
        }
    }

    /// Whether the same request can succeed if tried again later, with nothing else changed: the
    /// network, a store that failed on its own, products or a restore that could not be loaded. Not
    /// a cancel, a refusal of the request itself (an offer, a quantity, a product), or what needs
    /// the customer or the developer to act first (restrictions, a payment method, configuration).
    public var isRetryable: Bool {
        switch self {
        case .network, .storeFailure, .productInfoFailed, .restoreFailed, .unauthorized: true
        case .serverRejected(let error): error.isRetryable
        case .cancelled, .clientInvalid, .invalidPayment, .notAllowed, .productUnavailable, .invalidOffer,
            .invalidOfferSignature, .ineligibleForOffer, .paymentMethodRequired, .invalidAppUserID, .notLoggedIn,
            .purchasedByAnotherAccount, .unknown:
            false
        }
    }
}

/// The classic delegate, for apps written in that style. Every method has an empty default.
public protocol PaymentManagerDelegate: AnyObject, Sendable {
    /// Products were loaded: those the store knows, and the IDs it did not recognise.
    func responseProductInfo(_ products: [StoreProduct], invalidProducts: [InvalidProduct])
    /// A transaction, bought now or restored, was acknowledged by the server and finished.
    func completePayment(_ transaction: StoreTransaction)
    /// Every status change, in order; called before the more specific methods above.
    func onPaymentStatus(_ status: PaymentStatus)
    /// A purchase, a product request or a restore failed.
    func onPaymentError(_ error: PaymentError)
}

extension PaymentManagerDelegate {
    /// Does nothing unless the delegate implements it.
    public func responseProductInfo(_ products: [StoreProduct], invalidProducts: [InvalidProduct]) {}
    /// Does nothing unless the delegate implements it.
    public func completePayment(_ transaction: StoreTransaction) {}
    /// Does nothing unless the delegate implements it.
    public func onPaymentStatus(_ status: PaymentStatus) {}
    /// Does nothing unless the delegate implements it.
    public func onPaymentError(_ error: PaymentError) {}
}

/// What `purchase` came to.
public enum PurchaseOutcome: Hashable, Sendable {
    /// Paid. `customer` is the server's answer, or `nil` when the server could not be reached
    /// yet (the transaction is queued, delivered later, and only then finished).
    case purchased(StoreTransaction, customer: CustomerInfo?)
    /// Waiting for approval; the transaction arrives later through the update stream.
    case pending
    /// The customer cancelled.
    case cancelled
}
