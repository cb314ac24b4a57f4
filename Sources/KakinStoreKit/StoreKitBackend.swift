#if canImport(StoreKit)
import AppStoreModels
public import Kakin
import Foundation
import StoreKit

#if canImport(UIKit)
    public import UIKit
#endif

/// StoreKit 2 as the store, on Apple platforms. A thin mapping only: every decision (delivery,
/// retries, finishing after the server acknowledged) is made above it, in code tested on Linux.
@available(iOS 16.0, macOS 13.0, tvOS 16.0, watchOS 9.0, visionOS 1.0, *)
public struct StoreKitBackend: StoreBackend {
    /// Creates the backend; StoreKit holds all the state, and chooses where to confirm purchases.
    public init() {
        #if (canImport(UIKit) && !os(watchOS)) || os(Linux)
            confirmationScene = nil
        #endif
    }

    #if (canImport(UIKit) && !os(watchOS)) || os(Linux)
        /// The scene StoreKit shows its confirmation sheet in, asked for at each purchase; `nil`
        /// lets StoreKit choose.
        let confirmationScene: (@MainActor @Sendable () -> UIScene?)?

        /// Creates the backend that confirms purchases in the scene `scene` returns at the time of
        /// each purchase (`Product.purchase(confirmIn:options:)`), for apps with several windows:
        /// `StoreKitBackend(confirmIn: { view.window?.windowScene })`.
        public init(confirmIn scene: @escaping @MainActor @Sendable () -> UIScene?) {
            confirmationScene = scene
        }
    #endif

    /// Always `storekit`, so all managers on the device share one observer of `Transaction.updates`.
    public var storeIdentifier: String { "storekit" }

    /// `AppStore.canMakePayments`.
    public func canMakePayments() async throws -> Bool { AppStore.canMakePayments }

    /// Loads the products with `Product.products(for:)`; IDs StoreKit does not return are reported
    /// as invalid with the reason `unknownProduct`.
    public func products(
        for identifiers: [String]
    ) async throws -> (products: [StoreProduct], invalid: [InvalidProduct]) {
        let found = try await Product.products(for: identifiers)
        var products: [StoreProduct] = []
        for product in found {
            let subscription = product.subscription
            var mapped = StoreProduct(
                id: product.id, type: Self.type(product.type), displayName: product.displayName,
                description: product.description, price: product.price, displayPrice: product.displayPrice,
                currencyCode: product.priceFormatStyle.currencyCode,
                priceLocaleIdentifier: product.priceFormatStyle.locale.identifier,
                isFamilyShareable: product.isFamilyShareable,
                subscriptionPeriod: subscription.map { Self.period($0.subscriptionPeriod).iso8601 },
                subscriptionGroupID: subscription?.subscriptionGroupID,
                introductoryOffer: subscription?.introductoryOffer.map(Self.offer),
                promotionalOffers: subscription?.promotionalOffers.map(Self.offer) ?? [])
            if let subscription {
                if #available(iOS 16.4, macOS 13.3, tvOS 16.4, watchOS 9.4, visionOS 1.0, *) {
                    mapped.subscriptionGroupLevel = subscription.groupLevel
                }
                if #available(iOS 18.0, macOS 15.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *) {
                    mapped.winBackOffers = subscription.winBackOffers.map(Self.offer)
                }
                if subscription.introductoryOffer != nil {
                    mapped.isEligibleForIntroductoryOffer = await subscription.isEligibleForIntroOffer
                }
            }
            products.append(mapped)
        }
        let known = Set(found.map(\.id))
        let invalid = identifiers.filter { !known.contains($0) }.map {
            InvalidProduct(id: $0, reason: "unknownProduct", message: "the App Store does not know this product ID")
        }
        return (products, invalid)
    }

    /// Buys with `Product.purchase(options:)`, passing the quantity and the app account token.
    /// Throws `KakinError.Code.productUnavailable` when StoreKit does not know the product.
    public func purchase(_ productID: String, quantity: Int, appAccountToken: UUID?) async throws -> StorePurchaseResult
    {
        try await purchase(productID, options: StorePurchaseOptions(quantity: quantity, appAccountToken: appAccountToken))
    }

    /// Buys with `Product.purchase(options:)` and StoreKit's offer options: a server-signed
    /// promotional offer as `.promotionalOffer(offerID:keyID:nonce:signature:timestamp:)` (the form
    /// every StoreKit 2 release takes), an eligibility as `.introductoryOfferEligibility(compactJWS:)`,
    /// a win-back offer as `.winBackOffer(_:)` (iOS 18 and later).
    public func purchase(_ productID: String, options: StorePurchaseOptions) async throws -> StorePurchaseResult {
        guard let product = try await Product.products(for: [productID]).first else {
            throw KakinError(.productUnavailable, "\(productID) is not for sale", storeKitCode: 5)
        }
        var purchaseOptions: Set<Product.PurchaseOption> = [.quantity(options.quantity)]
        if let token = options.appAccountToken { purchaseOptions.insert(.appAccountToken(token)) }
        if let offer = options.promotionalOffer {
            guard let offerID = offer.offerId, let nonce = UUID(uuidString: offer.nonce),
                let signature = offer.signature.flatMap({ Data(base64Encoded: $0) })
            else { throw KakinError(.invalidResponse, "the signed offer lacks the older signature's parts") }
            purchaseOptions.insert(
                .promotionalOffer(
                    offerID: offerID, keyID: offer.keyId, nonce: nonce, signature: signature,
                    timestamp: Int(offer.timestamp)))
        }
        #if compiler(>=6.2)
            if let eligibility = options.introductoryOfferEligibility {
                purchaseOptions.insert(.introductoryOfferEligibility(compactJWS: eligibility.jws))
            }
        #endif
        if let winBackID = options.winBackOfferID {
            guard #available(iOS 18.0, macOS 15.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *),
                let offer = product.subscription?.winBackOffers.first(where: { $0.id == winBackID })
            else { throw KakinError(.storeFailure, "\(productID) has no win-back offer \(winBackID)", storeKitCode: 11) }
            purchaseOptions.insert(.winBackOffer(offer))
        }
        switch try await purchase(product, options: purchaseOptions) {
        case .success(let verification): return .purchased(Self.transaction(verification))
        case .pending: return .pending
        case .userCancelled: return .cancelled
        @unknown default: return .cancelled
        }
    }

    /// `Product.purchase(options:)`, or `purchase(confirmIn:options:)` in the app's scene when the
    /// backend was made with one and the app has one to show.
    private func purchase(
        _ product: Product, options: Set<Product.PurchaseOption>
    ) async throws -> Product.PurchaseResult {
        #if (canImport(UIKit) && !os(watchOS)) || os(Linux)
            if let confirmationScene { return try await Self.purchase(product, options: options, in: confirmationScene) }
        #endif
        return try await product.purchase(options: options)
    }

    #if (canImport(UIKit) && !os(watchOS)) || os(Linux)
        @MainActor
        private static func purchase(
            _ product: Product, options: Set<Product.PurchaseOption>, in scene: @MainActor @Sendable () -> UIScene?
        ) async throws -> Product.PurchaseResult {
            guard let scene = scene() else { return try await product.purchase(options: options) }
            return try await product.purchase(confirmIn: scene, options: options)
        }
    #endif

    /// Everything in `Transaction.unfinished`, verified or not: the server does the verifying.
    public func unfinishedTransactions() async throws -> [StoreTransaction] {
        var result: [StoreTransaction] = []
        for await verification in Transaction.unfinished { result.append(Self.transaction(verification)) }
        return result
    }

    /// Finishes the matching entry of `Transaction.unfinished`; does nothing if it is already finished.
    public func finish(_ transaction: StoreTransaction) async throws {
        for await verification in Transaction.unfinished
        where verification.unsafePayloadValue.id == UInt64(transaction.id) {
            await verification.unsafePayloadValue.finish()
        }
    }

    /// Runs `AppStore.sync()` (which may ask the customer to sign in), then returns
    /// `Transaction.currentEntitlements`, verified or not.
    public func restore() async throws -> [StoreTransaction] {
        try await AppStore.sync()
        var result: [StoreTransaction] = []
        for await verification in Transaction.currentEntitlements { result.append(Self.transaction(verification)) }
        return result
    }

    /// `Transaction.currentEntitlements`, keeping only what StoreKit verified, since no server
    /// checks these offline.
    public func currentEntitlements() async throws -> [StoreTransaction] {
        var result: [StoreTransaction] = []
        for await verification in Transaction.currentEntitlements {
            // Offline, nobody else checks: only what StoreKit verified counts.
            if case .verified = verification { result.append(Self.transaction(verification)) }
        }
        return result
    }

    /// `Transaction.updates`, mapped; cancelling the stream stops the task that listens.
    public func transactionUpdates() -> AsyncStream<StoreTransaction> {
        AsyncStream { continuation in
            let task = Task {
                for await verification in Transaction.updates { continuation.yield(Self.transaction(verification)) }
                continuation.finish()
            }
            continuation.onTermination = { _ in task.cancel() }
        }
    }

    /// The receipt at `Bundle.main.appStoreReceiptURL`, base64, or `nil` when the app has none.
    public func appReceipt() async throws -> String? {
        guard let url = Bundle.main.appStoreReceiptURL, let data = try? Data(contentsOf: url) else { return nil }
        return data.base64EncodedString()
    }

    /// The server verifies the JWS; the SDK passes it on whatever the device concluded.
    static func transaction(_ verification: VerificationResult<Transaction>) -> StoreTransaction {
        let transaction = verification.unsafePayloadValue
        return StoreTransaction(
            id: String(transaction.id), originalID: String(transaction.originalID), productID: transaction.productID,
            productType: type(transaction.productType), quantity: transaction.purchasedQuantity,
            purchaseDate: transaction.purchaseDate, expirationDate: transaction.expirationDate,
            revocationDate: transaction.revocationDate,
            appAccountToken: transaction.appAccountToken?.uuidString.lowercased(),
            jwsRepresentation: verification.jwsRepresentation)
    }

    static func type(_ type: Product.ProductType) -> ProductType {
        switch type {
        case .consumable: .consumable
        case .nonConsumable: .nonConsumable
        case .autoRenewable: .autoRenewableSubscription
        case .nonRenewable: .nonRenewingSubscription
        default: ProductType(rawValue: type.rawValue)
        }
    }

    static func period(_ period: Product.SubscriptionPeriod) -> SubscriptionPeriod {
        let unit: SubscriptionPeriod.Unit =
            switch period.unit {
            case .day: .day
            case .week: .week
            case .month: .month
            case .year: .year
            @unknown default: .day
            }
        return SubscriptionPeriod(value: period.value, unit: unit)
    }

    static func offer(_ offer: Product.SubscriptionOffer) -> SubscriptionOffer {
        let kind: SubscriptionOffer.Kind =
            switch offer.type {
            case .introductory: .introductory
            case .promotional: .promotional
            default: .winBack  // the one other kind StoreKit has
            }
        let mode: SubscriptionOffer.PaymentMode =
            switch offer.paymentMode {
            case .freeTrial: .freeTrial
            case .payUpFront: .payUpFront
            default: .payAsYouGo
            }
        return SubscriptionOffer(
            id: offer.id, kind: kind, price: offer.price, displayPrice: offer.displayPrice,
            period: period(offer.period), periodCount: offer.periodCount, paymentMode: mode)
    }
}
#endif
