public import Foundation

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
public enum PaymentError: Error, Hashable, Sendable {
    case productInfoFailed
    case clientInvalid
    case cancelled
    case invalidPayment
    case notAllowed
    case productUnavailable
    case restoreFailed
    case network
    /// The server refused the transaction for good; the error carries the server's code and cause.
    case serverRejected(KakinError)
    case unknown(String)

    /// Maps an SDK error (and the store's SKError code it may carry) to one of these cases.
    public init(_ error: any Error) {
        guard let error = error as? KakinError else {
            self = .unknown("\(error)")
            return
        }
        switch error.code {
        case .network: self = .network
        case .serverRejected, .tamperedResponse: self = .serverRejected(error)
        case .productUnavailable: self = .productUnavailable
        case .storeFailure:
            switch error.storeKitCode {
            case 1: self = .clientInvalid
            case 2: self = .cancelled
            case 3: self = .invalidPayment
            case 4: self = .notAllowed
            case 5: self = .productUnavailable
            default: self = .unknown(error.message)
            }
        default: self = .unknown(error.message)
        }
    }
}

/// The classic delegate, for apps written in that style. Every method has an empty default.
public protocol PaymentManagerDelegate: AnyObject, Sendable {
    func responseProductInfo(_ products: [StoreProduct], invalidProducts: [InvalidProduct])
    func completePayment(_ transaction: StoreTransaction)
    func onPaymentStatus(_ status: PaymentStatus)
    func onPaymentError(_ error: PaymentError)
}

extension PaymentManagerDelegate {
    public func responseProductInfo(_ products: [StoreProduct], invalidProducts: [InvalidProduct]) {}
    public func completePayment(_ transaction: StoreTransaction) {}
    public func onPaymentStatus(_ status: PaymentStatus) {}
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
