// The slice of StoreKit 2's `Transaction` that Kakin's StoreKit backend uses, as Apple documents it.
// Apple's documentation: https://developer.apple.com/documentation/storekit/transaction
public import Foundation

/// Information that represents the customer's purchase of a product in your app.
@available(iOS 15.0, macOS 12.0, tvOS 15.0, watchOS 8.0, visionOS 1.0, *)
public struct Transaction: Identifiable, Equatable, Hashable, Sendable {
    /// The unique identifier for the transaction.
    public let id: UInt64
    /// The transaction identifier of the original purchase.
    public let originalID: UInt64
    /// The product identifier of the in-app purchase.
    public let productID: String
    /// The type of the in-app purchase.
    public let productType: Product.ProductType
    /// The number of consumable products purchased.
    public let purchasedQuantity: Int
    /// The date that the App Store charged the customer's account.
    public let purchaseDate: Date
    /// The date the subscription expires or renews.
    public let expirationDate: Date?
    /// The date that the App Store refunded the transaction or revoked it from Family Sharing.
    public let revocationDate: Date?
    /// A UUID that associates the transaction with a user on your own service.
    public let appAccountToken: UUID?

    /// Indicates to the App Store that the app delivered the purchased content or enabled the
    /// service to finish the transaction.
    /// https://developer.apple.com/documentation/storekit/transaction/finish()
    public func finish() async { StoreKitTestScript.finish(id) }

    /// A sequence that emits all the customer's transactions that your app hasn't finished.
    /// https://developer.apple.com/documentation/storekit/transaction/unfinished
    public static var unfinished: Transaction.Transactions { Transactions(StoreKitTestScript.unfinished()) }

    /// A sequence of the latest transactions that entitle a customer to in-app purchases and subscriptions.
    /// https://developer.apple.com/documentation/storekit/transaction/currententitlements
    public static var currentEntitlements: Transaction.Transactions {
        Transactions(StoreKitTestScript.currentEntitlements())
    }

    /// The asynchronous sequence that emits a transaction when the system creates or updates
    /// transactions that occur outside of the app or on other devices.
    /// https://developer.apple.com/documentation/storekit/transaction/updates
    public static var updates: Transaction.Transactions { Transactions(StoreKitTestScript.updates()) }
}

@available(iOS 15.0, macOS 12.0, tvOS 15.0, watchOS 8.0, visionOS 1.0, *)
extension Transaction {
    /// An asynchronous sequence of transactions.
    /// https://developer.apple.com/documentation/storekit/transaction/transactions
    public struct Transactions: AsyncSequence, Sendable {
        public typealias Element = VerificationResult<Transaction>
        let stream: AsyncStream<Element>

        init(_ stream: AsyncStream<Element>) { self.stream = stream }

        public struct AsyncIterator: AsyncIteratorProtocol {
            var base: AsyncStream<Element>.Iterator
            public mutating func next() async -> Element? { await base.next() }
        }

        public func makeAsyncIterator() -> AsyncIterator { AsyncIterator(base: stream.makeAsyncIterator()) }
    }
}

@available(iOS 15.0, macOS 12.0, tvOS 17.0, watchOS 10.0, visionOS 1.0, *)
extension Transaction {
    /// The errors of a refund request.
    /// https://developer.apple.com/documentation/storekit/transaction/refundrequesterror
    @available(iOS 15.0, macOS 12.0, tvOS 17.0, watchOS 10.0, visionOS 1.0, *)
    public enum RefundRequestError: Error, Equatable, Hashable {
        /// The App Store has already received a refund request for this in-app purchase.
        case duplicateRequest
        /// The refund request failed.
        case failed
    }

    /// What a refund request came to. Apple's documentation shows no `Sendable` conformance, so the
    /// stand-in declares none.
    /// https://developer.apple.com/documentation/storekit/transaction/refundrequeststatus
    @available(iOS 15.0, macOS 12.0, tvOS 17.0, watchOS 10.0, visionOS 1.0, *)
    public enum RefundRequestStatus: Equatable, Hashable {
        /// The customer submitted the request (the App Store decides later).
        case success
        /// The customer cancelled the request.
        case userCancelled
    }

    /// Presents the refund request sheet for the transaction `transactionID` in a window scene.
    /// Throws `Transaction.RefundRequestError` or `StoreKitError`.
    /// https://developer.apple.com/documentation/storekit/transaction/beginrefundrequest(for:in:)-65tph
    @available(iOS 15.0, visionOS 1.0, *)
    @available(watchOS, unavailable)
    @available(tvOS, unavailable)
    @MainActor
    public static func beginRefundRequest(
        for transactionID: UInt64, in scene: UIWindowScene
    ) async throws -> Transaction.RefundRequestStatus {
        try StoreKitTestScript.beginRefundRequest(for: transactionID, in: ObjectIdentifier(scene))
    }
}

@available(iOS 15.0, macOS 12.0, tvOS 17.0, watchOS 10.0, visionOS 1.0, *)
extension Transaction.RefundRequestError: Sendable {}

@available(iOS 15.4, macOS 12.3, tvOS 17.0, watchOS 10.0, visionOS 1.0, *)
extension Transaction.RefundRequestError: LocalizedError {
    /// A description of the error (the case's name, in this stand-in).
    public var errorDescription: String? { "\(self)" }
}

@available(macOS 12.0, *)
@available(iOS, unavailable)
@available(tvOS, unavailable)
@available(watchOS, unavailable)
@available(visionOS, unavailable)
extension Transaction {
    /// Presents the refund request sheet for the transaction `transactionID` in a view controller
    /// (macOS). Throws `Transaction.RefundRequestError` or `StoreKitError`. Apple's declaration
    /// names no actor; `NSViewController` is main-actor isolated.
    /// https://developer.apple.com/documentation/storekit/transaction/beginrefundrequest(for:in:)-9mscy
    public static func beginRefundRequest(
        for transactionID: UInt64, in controller: NSViewController
    ) async throws -> Transaction.RefundRequestStatus {
        try StoreKitTestScript.beginRefundRequest(for: transactionID, in: ObjectIdentifier(controller))
    }
}
