#if canImport(StoreKit)
import AppStoreModels
public import Kakin
import Foundation
import StoreKit

#if canImport(UIKit)
    public import UIKit
#endif
#if os(macOS)
    public import AppKit
#endif

// StoreKit declares top-level names Kakin's modules declare too (`SubscriptionPeriod` and
// `SubscriptionStatus` since iOS 18.4, `AppTransaction`), so this file names Kakin's types with
// their module: `AppStoreModels.SubscriptionPeriod`, `Kakin.SubscriptionOffer`.

/// StoreKit 2 as the store, on Apple platforms. A thin mapping only: every decision (delivery,
/// retries, finishing after the server acknowledged) is made above it, in code tested on Linux.
/// StoreKit's errors are mapped to `KakinError` with the matching StoreKit code, which
/// `PaymentError` turns into its cases; a customer who cancels is an outcome, not an error.
///
/// On visionOS StoreKit confirms a purchase only in a scene the app names, so the backend is made
/// there with `init(confirmIn:)`. The App Store's sheets (`showManageSubscriptions(subscriptionGroupID:)`,
/// `beginRefundRequest(for:)`, `presentOfferCodeRedeemSheet()`) need that window scene on iOS and
/// visionOS, and a window on macOS (`init(presentingIn:)`); StoreKit has none of them on tvOS and
/// watchOS, where they throw `KakinError/Code/unsupported`.
@available(iOS 16.0, macOS 13.0, tvOS 16.0, watchOS 9.0, visionOS 1.0, *)
public struct StoreKitBackend: StoreBackend {
    /// Where StoreKit shows its confirmation and sheets: what the app gave, asked for each time one
    /// is shown.
    enum Presenter: Sendable {
        /// The app gave nothing: StoreKit chooses where to confirm purchases, and there are no sheets.
        case none
        #if (canImport(UIKit) && !os(watchOS)) || os(Linux)
            /// The app's window scene (iOS, tvOS, visionOS).
            case windowScene(@MainActor @Sendable () -> UIWindowScene?)
        #endif
        #if os(macOS) || os(Linux)
            /// The app's window (macOS).
            case window(@MainActor @Sendable () -> NSWindow?)
        #endif
    }

    let presenter: Presenter

    /// Creates the backend; StoreKit chooses where to confirm purchases, and the App Store's sheets
    /// throw `KakinError/Code/notConfigured`. Not on visionOS, where a purchase needs the app's
    /// scene: use `init(confirmIn:)` there.
    @available(
        visionOS, unavailable, message: "visionOS confirms purchases in a scene: use StoreKitBackend(confirmIn:)")
    public init() {
        presenter = .none
    }

    #if (canImport(UIKit) && !os(watchOS)) || os(Linux)
        /// Creates the backend that shows StoreKit's confirmation sheet and the App Store's sheets
        /// in the window scene `scene` returns at that moment (`Product.purchase(confirmIn:options:)`),
        /// e.g. `StoreKitBackend(confirmIn: { view.window?.windowScene })`. Required on visionOS; where
        /// `scene` returns `nil`, other platforms let StoreKit choose, and visionOS throws
        /// `KakinError/Code/notConfigured`. From iOS 27 the offer code sheet is presented from the
        /// view controller on top of the scene's key window.
        public init(confirmIn scene: @escaping @MainActor @Sendable () -> UIWindowScene?) {
            presenter = .windowScene(scene)
        }
    #endif

    #if os(macOS) || os(Linux)
        /// Creates the backend that shows the App Store's sheets on the window `window` returns at
        /// that moment (macOS), e.g. `StoreKitBackend(presentingIn: { NSApp.keyWindow })`: the refund
        /// request and the older offer code sheet in its content view controller, the manage-
        /// subscriptions sheet (macOS 27.3) and the offer code sheet of macOS 27 on the window itself.
        /// Purchases are confirmed where StoreKit chooses.
        public init(presentingIn window: @escaping @MainActor @Sendable () -> NSWindow?) {
            presenter = .window(window)
        }
    #endif

    /// Always `storekit`, so all managers on the device share one observer of `Transaction.updates`.
    public var storeIdentifier: String { "storekit" }

    /// `AppStore.canMakePayments`.
    public func canMakePayments() async throws -> Bool { AppStore.canMakePayments }

    /// `Storefront.current?.countryCode`: the storefront of the Apple Account the device uses.
    public func storefrontCountryCode() async -> String? { await Storefront.current?.countryCode }

    /// Loads the products with `Product.products(for:)`; IDs StoreKit does not return are reported
    /// as invalid with the reason `unknownProduct`.
    public func products(
        for identifiers: [String]
    ) async throws -> (products: [StoreProduct], invalid: [InvalidProduct]) {
        let found: [Product]
        do { found = try await Product.products(for: identifiers) } catch { throw Self.kakinError(error) }
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

    /// Buys with StoreKit, passing the quantity and the app account token.
    /// Throws `KakinError.Code.productUnavailable` when StoreKit does not know the product.
    public func purchase(_ productID: String, quantity: Int, appAccountToken: UUID?) async throws -> StorePurchaseResult
    {
        try await purchase(
            productID, options: StorePurchaseOptions(quantity: quantity, appAccountToken: appAccountToken))
    }

    /// Buys with StoreKit and its offer options (see `purchaseOptions(_:for:)`). A customer who
    /// cancels, on the sheet or by throwing `StoreKitError.userCancelled`, is `StorePurchaseResult/cancelled`;
    /// StoreKit's other errors are thrown mapped (`kakinError(_:)`).
    public func purchase(_ productID: String, options: StorePurchaseOptions) async throws -> StorePurchaseResult {
        let product: Product?
        do { product = try await Product.products(for: [productID]).first } catch { throw Self.kakinError(error) }
        guard let product else {
            throw KakinError(.productUnavailable, "\(productID) is not for sale", storeKitCode: 5)
        }
        let purchaseOptions = try Self.purchaseOptions(options, for: product)
        do {
            return try await Self.purchase(product, options: purchaseOptions, presenter: presenter)
        } catch StoreKitError.userCancelled {
            return .cancelled
        } catch {
            throw Self.kakinError(error)
        }
    }

    /// StoreKit's options for a purchase: the quantity, the app account token, a server-signed
    /// promotional offer (the JWS form on iOS 26 and later, the older signature form before),
    /// the server's introductory-offer eligibility as `.introductoryOfferEligibility(compactJWS:)`,
    /// and a win-back offer the product has (iOS 18 and later).
    static func purchaseOptions(
        _ options: StorePurchaseOptions, for product: Product
    ) throws -> Set<Product.PurchaseOption> {
        var result: Set<Product.PurchaseOption> = [.quantity(options.quantity)]
        if let token = options.appAccountToken { result.insert(.appAccountToken(token)) }
        if options.promotionalOffer != nil {
            if #available(iOS 26.0, macOS 26.0, tvOS 26.0, watchOS 26.0, visionOS 26.0, *) {
                result.formUnion(try promotionalOffer(options, inJWSForm: true))
            } else {
                result.formUnion(try promotionalOffer(options, inJWSForm: false))
            }
        }
        if let eligibility = options.introductoryOfferEligibility {
            result.insert(.introductoryOfferEligibility(compactJWS: eligibility.jws))
        }
        if let winBackID = options.winBackOfferID {
            guard #available(iOS 18.0, macOS 15.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *),
                let offer = product.subscription?.winBackOffers.first(where: { $0.id == winBackID })
            else {
                throw KakinError(.storeFailure, "\(product.id) has no win-back offer \(winBackID)", storeKitCode: 11)
            }
            result.insert(.winBackOffer(offer))
        }
        return result
    }

    /// The purchase's server-signed promotional offer as StoreKit's options:
    /// `.promotionalOffer(_:compactJWS:)` with the offer's JWS, or the older
    /// `.promotionalOffer(offerID:keyID:nonce:signature:timestamp:)` with the signature the server
    /// made alongside it. None when the purchase has no promotional offer.
    static func promotionalOffer(_ options: StorePurchaseOptions, inJWSForm: Bool) throws -> [Product.PurchaseOption] {
        guard let offer = options.promotionalOffer else { return [] }
        guard let offerID = offer.offerId else {
            throw KakinError(.invalidResponse, "the signed promotional offer names no offer")
        }
        if inJWSForm { return Product.PurchaseOption.promotionalOffer(offerID, compactJWS: offer.jws) }
        guard let nonce = UUID(uuidString: offer.nonce),
            let signature = offer.signature.flatMap({ Data(base64Encoded: $0) })
        else { throw KakinError(.invalidResponse, "the signed offer lacks the older signature's parts") }
        return [
            .promotionalOffer(
                offerID: offerID, keyID: offer.keyId, nonce: nonce, signature: signature,
                timestamp: Int(offer.timestamp))
        ]
    }

    /// `Product.purchase(options:)`, or `purchase(confirmIn:options:)` in the app's window scene
    /// when the backend was made with one and the app has one to show (visionOS has only the
    /// second), mapped on the main actor, where StoreKit returns its result.
    @MainActor
    static func purchase(
        _ product: Product, options: Set<Product.PurchaseOption>, presenter: Presenter
    ) async throws -> StorePurchaseResult {
        let result: Product.PurchaseResult
        #if os(visionOS)
            guard case .windowScene(let scene) = presenter, let scene = scene() else { throw noScene("a purchase") }
            result = try await product.purchase(confirmIn: scene, options: options)
        #elseif (canImport(UIKit) && !os(watchOS)) || os(Linux)
            if case .windowScene(let scene) = presenter, let scene = scene() {
                result = try await product.purchase(confirmIn: scene, options: options)
            } else {
                result = try await product.purchase(options: options)
            }
        #else
            result = try await product.purchase(options: options)
        #endif
        switch result {
        case .success(let verification): return .purchased(transaction(verification))
        case .pending: return .pending
        case .userCancelled: return .cancelled
        @unknown default: return .cancelled
        }
    }

    /// The error for something StoreKit shows only in a window scene, when the app gave none.
    static func noScene(_ what: String) -> KakinError {
        KakinError(
            .notConfigured,
            "StoreKit shows \(what) in a window scene: make the backend with StoreKitBackend(confirmIn:)")
    }

    /// The error for something StoreKit shows only on a window (macOS), when the app gave none.
    static func noWindow(_ what: String) -> KakinError {
        KakinError(
            .notConfigured,
            "StoreKit shows \(what) on a window: make the backend with StoreKitBackend(presentingIn:)")
    }

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
    /// `Transaction.currentEntitlements`, verified or not. A customer who does not sign in is
    /// thrown as StoreKit code 2 (`PaymentError/cancelled`), which restores nothing.
    public func restore() async throws -> [StoreTransaction] {
        do { try await AppStore.sync() } catch { throw Self.kakinError(error) }
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
        let bundle: any AppReceiptLocation = Bundle.main
        guard let url = bundle.appStoreReceiptURL, let data = try? Data(contentsOf: url) else { return nil }
        return data.base64EncodedString()
    }

    /// `AppTransaction.shared`'s `jwsRepresentation`, verified or not (the server verifies it).
    /// StoreKit's errors (no app transaction, the customer not signed in to the App Store) are
    /// thrown mapped as everywhere else.
    public func appTransaction() async throws -> String? {
        do { return try await StoreKit.AppTransaction.shared.jwsRepresentation } catch { throw Self.kakinError(error) }
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

    static func type(_ type: Product.ProductType) -> AppStoreModels.ProductType {
        switch type {
        case .consumable: .consumable
        case .nonConsumable: .nonConsumable
        case .autoRenewable: .autoRenewableSubscription
        case .nonRenewable: .nonRenewingSubscription
        default: AppStoreModels.ProductType(rawValue: type.rawValue)
        }
    }

    static func period(_ period: Product.SubscriptionPeriod) -> AppStoreModels.SubscriptionPeriod {
        let unit: AppStoreModels.SubscriptionPeriod.Unit =
            switch period.unit {
            case .day: .day
            case .week: .week
            case .month: .month
            case .year: .year
            @unknown default: .day
            }
        return AppStoreModels.SubscriptionPeriod(value: period.value, unit: unit)
    }

    static func offer(_ offer: Product.SubscriptionOffer) -> Kakin.SubscriptionOffer {
        let kind: Kakin.SubscriptionOffer.Kind =
            switch offer.type {
            case .introductory: .introductory
            case .promotional: .promotional
            default: .winBack  // the one other kind StoreKit has
            }
        let mode: Kakin.SubscriptionOffer.PaymentMode =
            switch offer.paymentMode {
            case .freeTrial: .freeTrial
            case .payUpFront: .payUpFront
            default: .payAsYouGo
            }
        return Kakin.SubscriptionOffer(
            id: offer.id, kind: kind, price: offer.price, displayPrice: offer.displayPrice,
            period: period(offer.period), periodCount: offer.periodCount, paymentMode: mode)
    }
}
/// Where the app receipt is. Apple deprecated `Bundle.appStoreReceiptURL` in iOS 18 and macOS 15,
/// the package's minimums, in favour of `AppTransaction`; the legacy server flow still reads the
/// receipt, so the backend reads the property through this requirement, which `Bundle` meets, and
/// the package builds without a deprecation warning.
protocol AppReceiptLocation {
    /// The receipt's file URL, whether or not the file exists.
    var appStoreReceiptURL: URL? { get }
}

extension Bundle: AppReceiptLocation {}
#endif
