// Not part of Apple's API: how tests script the App Store behind this stand-in for StoreKit.
public import Foundation
import Synchronization

/// The scripted App Store behind this module's `Product`, `Transaction` and `AppStore`: tests set
/// what the store has and answers, then read what was asked of it. Every test that uses it runs
/// under ``withScript(_:_:)``, which resets it and keeps other tests out meanwhile.
public enum StoreKitTestScript {
    /// What a scripted purchase answers: the cases of `Product.PurchaseResult`, which Apple documents
    /// without `Sendable`, so the script keeps its own and makes StoreKit's when asked.
    public enum PurchaseAnswer: Sendable {
        case success(VerificationResult<Transaction>)
        case userCancelled
        case pending
    }

    /// What a scripted refund request answers: the cases of `Transaction.RefundRequestStatus`.
    public enum RefundAnswer: Sendable {
        case success
        case userCancelled
    }

    /// What the scripted store has and answers.
    public struct State: Sendable {
        /// Products for sale, by ID.
        public var products: [String: Product] = [:]
        /// What buying a product gives, by product ID (`.userCancelled` when not set).
        public var purchaseResults: [String: PurchaseAnswer] = [:]
        /// The error buying a product throws, by product ID, instead of a result.
        public var purchaseErrors: [String: any Error & Sendable] = [:]
        /// The error `Product.products(for:)` throws, when set.
        public var productsError: (any Error & Sendable)?
        /// Transactions not finished.
        public var unfinished: [VerificationResult<Transaction>] = []
        /// The account's current entitlements.
        public var currentEntitlements: [VerificationResult<Transaction>] = []
        /// Transactions `Transaction.updates` delivers to each new listener.
        public var updates: [VerificationResult<Transaction>] = []
        /// `AppStore.canMakePayments`.
        public var canMakePayments = true
        /// The country code (ISO 3166-1 alpha-3) of `Storefront.current`; `nil` makes it `nil`.
        public var storefrontCountryCode: String? = "USA"
        /// The error `AppStore.sync()` throws, when set.
        public var syncError: (any Error & Sendable)?
        /// The JWS of each transaction, by ID.
        public var jws: [UInt64: String] = [:]
        /// Subscription groups whose introductory offer the customer may no longer take.
        public var introOfferUsedGroups: Set<String> = []
        /// The error the manage-subscriptions sheet throws, when set.
        public var manageSubscriptionsError: (any Error & Sendable)?
        /// What the refund request sheet answers, by transaction ID (`.success` when not set).
        public var refundResults: [UInt64: RefundAnswer] = [:]
        /// The error the refund request sheet throws, when set.
        public var refundError: (any Error & Sendable)?
        /// The app's app transaction (`AppTransaction.shared`); `nil` makes it throw
        /// `StoreKitError.unknown`, as StoreKit does when it has none.
        public var appTransaction: VerificationResult<AppTransaction>?
        /// The JWS of the app transaction (`"jws-app-<appTransactionID>"` when not set).
        public var appTransactionJWS: String?
        /// The error `AppTransaction.shared` throws, when set.
        public var appTransactionError: (any Error & Sendable)?
        /// What the offer code redemption sheet of iOS 27 returns: the transaction the redemption
        /// made; `nil` makes it throw `StoreKitError.userCancelled`, as a customer who closes it does.
        public var offerCodeRedemption: VerificationResult<Transaction>?
        /// The error the offer code redemption sheet throws, when set (either sheet).
        public var offerCodeError: (any Error & Sendable)?

        /// What was asked of the store.
        public var purchases: [(productID: String, options: Set<Product.PurchaseOption>)] = []
        /// For each purchase, the scene its confirmation sheet was shown in (`nil`: none given).
        public var confirmationScenes: [ObjectIdentifier?] = []
        /// IDs of the transactions finished.
        public var finished: [UInt64] = []
        /// How many times `AppStore.sync()` ran.
        public var syncs = 0
        /// Each manage-subscriptions sheet shown: its scene and the subscription group asked for.
        public var manageSubscriptionsSheets: [(scene: ObjectIdentifier, subscriptionGroupID: String?)] = []
        /// Each refund request sheet shown: the transaction and the scene.
        public var refundRequests: [(transactionID: UInt64, scene: ObjectIdentifier)] = []
        /// How many times `AppTransaction.shared` was read.
        public var appTransactionReads = 0
        /// Each offer code redemption sheet shown: what it was presented from (a scene, view
        /// controller or window) and whether it was the iOS 27 form, which returns the transaction.
        public var offerCodeSheets: [(presenter: ObjectIdentifier, returnsTransaction: Bool)] = []

        public init() {}
    }

    private static let state = Mutex(State())
    private static let gate = AsyncGate()

    /// Runs `body` with the store scripted as `initial`, one test at a time; returns what the
    /// store looks like afterwards.
    public static func withScript(
        _ initial: State, _ body: () async throws -> Void
    ) async throws -> State {
        await gate.enter()
        defer { gate.leave() }
        state.withLock { $0 = initial }
        try await body()
        return state.withLock { $0 }
    }

    /// Changes the script while a test runs.
    public static func update(_ change: (inout State) -> Void) { state.withLock { change(&$0) } }

    /// A product as the App Store describes one.
    public static func product(
        id: String, type: Product.ProductType, displayName: String, description: String, price: Decimal,
        displayPrice: String, currencyCode: String, locale: Locale, isFamilyShareable: Bool = false,
        subscription: (groupID: String, value: Int, unit: Product.SubscriptionPeriod.Unit)? = nil,
        groupLevel: Int = 1, introductoryOffer: Product.SubscriptionOffer? = nil,
        promotionalOffers: [Product.SubscriptionOffer] = [], winBackOffers: [Product.SubscriptionOffer] = []
    ) -> Product {
        Product(
            id: id, type: type, displayName: displayName, description: description, price: price,
            displayPrice: displayPrice, isFamilyShareable: isFamilyShareable,
            subscription: subscription.map {
                Product.SubscriptionInfo(
                    subscriptionGroupID: $0.groupID, subscriptionPeriod: .init(value: $0.value, unit: $0.unit),
                    introductoryOffer: introductoryOffer, promotionalOffers: promotionalOffers,
                    _groupLevel: groupLevel, _winBackOffers: winBackOffers)
            },
            _priceFormatStyle: Decimal.FormatStyle.Currency(code: currencyCode, locale: locale))
    }

    /// A subscription offer as the App Store describes one.
    public static func offer(
        id: String?, type: Product.SubscriptionOffer.OfferType, price: Decimal, displayPrice: String,
        period: Product.SubscriptionPeriod, periodCount: Int, paymentMode: Product.SubscriptionOffer.PaymentMode
    ) -> Product.SubscriptionOffer {
        Product.SubscriptionOffer(
            id: id, type: type, price: price, displayPrice: displayPrice, period: period, periodCount: periodCount,
            paymentMode: paymentMode)
    }

    /// A subscription period.
    public static func period(_ value: Int, _ unit: Product.SubscriptionPeriod.Unit) -> Product.SubscriptionPeriod {
        Product.SubscriptionPeriod(value: value, unit: unit)
    }

    static func isEligibleForIntroOffer(groupID: String) -> Bool {
        state.withLock { !$0.introOfferUsedGroups.contains(groupID) }
    }

    /// A transaction as the App Store records one.
    public static func transaction(
        id: UInt64, originalID: UInt64? = nil, productID: String, productType: Product.ProductType,
        quantity: Int = 1, purchaseDate: Date, expirationDate: Date? = nil, revocationDate: Date? = nil,
        appAccountToken: UUID? = nil
    ) -> Transaction {
        Transaction(
            id: id, originalID: originalID ?? id, productID: productID, productType: productType,
            purchasedQuantity: quantity, purchaseDate: purchaseDate, expirationDate: expirationDate,
            revocationDate: revocationDate, appAccountToken: appAccountToken)
    }

    /// An app transaction as the App Store signs one.
    public static func appTransaction(bundleID: String, appTransactionID: String) -> AppTransaction {
        AppTransaction(bundleID: bundleID, _appTransactionID: appTransactionID)
    }

    static func appTransaction() throws -> VerificationResult<AppTransaction> {
        try state.withLock { state in
            state.appTransactionReads += 1
            if let error = state.appTransactionError { throw error }
            guard let appTransaction = state.appTransaction else { throw StoreKitError.unknown }
            return appTransaction
        }
    }

    static func jws(of appTransaction: AppTransaction) -> String {
        state.withLock { $0.appTransactionJWS } ?? "jws-app-\(appTransaction.appTransactionID)"
    }

    static func products(for identifiers: [String]) throws -> [Product] {
        try state.withLock { state in
            if let error = state.productsError { throw error }
            return identifiers.compactMap { state.products[$0] }
        }
    }

    static func purchase(
        _ product: Product, options: Set<Product.PurchaseOption>, confirmedIn scene: ObjectIdentifier? = nil
    ) throws -> Product.PurchaseResult {
        try state.withLock { state in
            state.purchases.append((product.id, options))
            state.confirmationScenes.append(scene)
            if let error = state.purchaseErrors[product.id] { throw error }
            switch state.purchaseResults[product.id] ?? .userCancelled {
            case .success(let verification): return .success(verification)
            case .userCancelled: return .userCancelled
            case .pending: return .pending
            }
        }
    }

    static func finish(_ id: UInt64) {
        state.withLock { state in
            state.finished.append(id)
            state.unfinished.removeAll { $0.unsafePayloadValue.id == id }
        }
    }

    static func unfinished() -> AsyncStream<VerificationResult<Transaction>> {
        stream(state.withLock { $0.unfinished }, finishes: true)
    }

    static func currentEntitlements() -> AsyncStream<VerificationResult<Transaction>> {
        stream(state.withLock { $0.currentEntitlements }, finishes: true)
    }

    /// The updates scripted so far; like StoreKit's, the sequence then stays open.
    static func updates() -> AsyncStream<VerificationResult<Transaction>> {
        stream(state.withLock { $0.updates }, finishes: false)
    }

    static func canMakePayments() -> Bool { state.withLock { $0.canMakePayments } }

    static func currentStorefront() -> Storefront? {
        state.withLock { $0.storefrontCountryCode }.map { Storefront(countryCode: $0, id: "storefront-\($0)") }
    }

    static func sync() throws {
        try state.withLock { state in
            state.syncs += 1
            if let error = state.syncError { throw error }
        }
    }

    static func showManageSubscriptions(in scene: ObjectIdentifier, subscriptionGroupID: String?) throws {
        try state.withLock { state in
            state.manageSubscriptionsSheets.append((scene, subscriptionGroupID))
            if let error = state.manageSubscriptionsError { throw error }
        }
    }

    static func beginRefundRequest(
        for transactionID: UInt64, in scene: ObjectIdentifier
    ) throws -> Transaction.RefundRequestStatus {
        try state.withLock { state in
            state.refundRequests.append((transactionID, scene))
            if let error = state.refundError { throw error }
            switch state.refundResults[transactionID] ?? .success {
            case .success: return .success
            case .userCancelled: return .userCancelled
            }
        }
    }

    static func presentOfferCodeRedeemSheet(from presenter: ObjectIdentifier, returningTransaction: Bool) throws {
        try state.withLock { state in
            state.offerCodeSheets.append((presenter, returningTransaction))
            if let error = state.offerCodeError { throw error }
        }
    }

    static func redeemedTransaction(from presenter: ObjectIdentifier) throws -> VerificationResult<Transaction> {
        try presentOfferCodeRedeemSheet(from: presenter, returningTransaction: true)
        guard let redeemed = state.withLock({ $0.offerCodeRedemption }) else { throw StoreKitError.userCancelled }
        return redeemed
    }

    static func jws(of transaction: Transaction) -> String {
        state.withLock { $0.jws[transaction.id] } ?? "jws-\(transaction.id)"
    }

    private static func stream(
        _ elements: [VerificationResult<Transaction>], finishes: Bool
    ) -> AsyncStream<VerificationResult<Transaction>> {
        AsyncStream { continuation in
            for element in elements { continuation.yield(element) }
            if finishes { continuation.finish() }
        }
    }
}

/// Lets one holder in at a time, in order.
final class AsyncGate: Sendable {
    private let state = Mutex<(busy: Bool, waiting: [CheckedContinuation<Void, Never>])>((false, []))

    func enter() async {
        await withCheckedContinuation { continuation in
            let admitted = state.withLock { state -> Bool in
                if state.busy {
                    state.waiting.append(continuation)
                    return false
                }
                state.busy = true
                return true
            }
            if admitted { continuation.resume() }
        }
    }

    func leave() {
        let next = state.withLock { state -> CheckedContinuation<Void, Never>? in
            if state.waiting.isEmpty {
                state.busy = false
                return nil
            }
            return state.waiting.removeFirst()
        }
        next?.resume()
    }
}
