#if os(Linux)
import AppStoreModels
import Foundation
import Kakin
@testable import KakinStoreKit
import KakinWire
import StoreKit
import Testing

/// The StoreKit 2 backend, compiled on Linux against the StoreKit stand-in and driven by its
/// scripted App Store: what the SDK gets for each thing StoreKit can answer.
@Suite struct StoreKitBackendTests {
    static let removeAd = "com.example.kakin.removeAd"
    static let premium = "com.example.kakin.premium.monthly"
    static let now = Date(timeIntervalSince1970: 1_790_000_000)

    static func script() -> StoreKitTestScript.State {
        var state = StoreKitTestScript.State()
        state.products[removeAd] = StoreKitTestScript.product(
            id: removeAd, type: .nonConsumable, displayName: "Remove Ads", description: "No more ads, ever.",
            price: Decimal(string: "120")!, displayPrice: "¥120", currencyCode: "JPY",
            locale: Locale(identifier: "ja_JP"), isFamilyShareable: true)
        state.products[premium] = StoreKitTestScript.product(
            id: premium, type: .autoRenewable, displayName: "Premium", description: "Everything, monthly.",
            price: Decimal(string: "4.99")!, displayPrice: "$4.99", currencyCode: "USD",
            locale: Locale(identifier: "en_US"), subscription: ("21000001", 1, .month), groupLevel: 2,
            introductoryOffer: StoreKitTestScript.offer(
                id: nil, type: .introductory, price: 0, displayPrice: "$0.00",
                period: StoreKitTestScript.period(1, .week), periodCount: 1, paymentMode: .freeTrial),
            promotionalOffers: [
                StoreKitTestScript.offer(
                    id: "comeback50", type: .promotional, price: Decimal(string: "2.49")!, displayPrice: "$2.49",
                    period: StoreKitTestScript.period(1, .month), periodCount: 3, paymentMode: .payAsYouGo)
            ],
            winBackOffers: [
                StoreKitTestScript.offer(
                    id: "winback1", type: .winBack, price: Decimal(string: "0.99")!, displayPrice: "$0.99",
                    period: StoreKitTestScript.period(1, .month), periodCount: 1, paymentMode: .payUpFront)
            ])
        return state
    }

    static func transaction(_ id: UInt64, _ productID: String, expires: Date? = nil) -> Transaction {
        StoreKitTestScript.transaction(
            id: id, productID: productID, productType: productID == premium ? .autoRenewable : .nonConsumable,
            purchaseDate: now, expirationDate: expires, appAccountToken: UUID(uuidString: "6F0E3B52-3C8A-4B16-9B8B-4A6C2D1E0F11"))
    }

    @Test func productsAreMappedAndUnknownIDsReportedInvalid() async throws {
        var found: (products: [StoreProduct], invalid: [InvalidProduct])?
        _ = try await StoreKitTestScript.withScript(Self.script()) {
            found = try await StoreKitBackend().products(for: [Self.removeAd, Self.premium, "com.example.kakin.gone"])
        }
        let (products, invalid) = try #require(found)
        #expect(products.map(\.id) == [Self.removeAd, Self.premium])
        #expect(products[0].type == .nonConsumable && products[0].isFamilyShareable)
        #expect(products[0].price == Decimal(string: "120") && products[0].displayPrice == "¥120")
        #expect(products[0].currencyCode == "JPY" && products[0].priceLocaleIdentifier == "ja_JP")
        #expect(products[1].type == .autoRenewableSubscription)
        #expect(products[1].subscriptionPeriod == "P1M" && products[1].subscriptionGroupID == "21000001")
        #expect(products[1].subscriptionPeriodValue == SubscriptionPeriod(value: 1, unit: .month))
        #expect(products[1].subscriptionGroupLevel == 2)
        #expect(
            products[1].introductoryOffer
                == SubscriptionOffer(
                    id: nil, kind: .introductory, price: 0, displayPrice: "$0.00", period: .oneWeek, periodCount: 1,
                    paymentMode: .freeTrial))
        #expect(products[1].isEligibleForIntroductoryOffer == true)
        #expect(products[1].promotionalOffers.map(\.id) == ["comeback50"])
        #expect(products[1].promotionalOffers.first?.paymentMode == .payAsYouGo)
        #expect(products[1].promotionalOffers.first?.periodCount == 3)
        #expect(products[1].winBackOffers.map(\.kind) == [.winBack])
        #expect(products[0].introductoryOffer == nil && products[0].isEligibleForIntroductoryOffer == nil)
        #expect(invalid.map(\.id) == ["com.example.kakin.gone"])
        #expect(invalid.first?.reason == "unknownProduct")
    }

    @Test func aCustomerWhoHadTheIntroductoryOfferIsNotEligibleAgain() async throws {
        var script = Self.script()
        script.introOfferUsedGroups = ["21000001"]
        var products: [StoreProduct] = []
        _ = try await StoreKitTestScript.withScript(script) {
            products = try await StoreKitBackend().products(for: [Self.premium]).products
        }
        #expect(products.first?.isEligibleForIntroductoryOffer == false)
    }

    @Test func aPurchaseSucceedsWithTheTransactionItsJWSAndTheOptionsAsked() async throws {
        var script = Self.script()
        script.purchaseResults[Self.removeAd] = .success(.verified(Self.transaction(7, Self.removeAd)))
        script.jws[7] = "header.payload.signature"
        var result: StorePurchaseResult?
        let token = UUID()
        let after = try await StoreKitTestScript.withScript(script) {
            result = try await StoreKitBackend().purchase(Self.removeAd, quantity: 2, appAccountToken: token)
        }
        guard case .purchased(let transaction) = try #require(result) else {
            Issue.record("expected a purchase, got \(String(describing: result))")
            return
        }
        #expect(transaction.id == "7" && transaction.originalID == "7" && transaction.productID == Self.removeAd)
        #expect(transaction.jwsRepresentation == "header.payload.signature")
        #expect(transaction.appAccountToken == "6f0e3b52-3c8a-4b16-9b8b-4a6c2d1e0f11", "lowercased, as the server stores it")
        #expect(after.purchases.count == 1)
        #expect(after.purchases.first?.options == [.quantity(2), .appAccountToken(token)])
    }

    @Test func offersArePassedAsStoreKitsPurchaseOptions() async throws {
        var script = Self.script()
        script.purchaseResults[Self.premium] = .success(.verified(Self.transaction(8, Self.premium)))
        let token = UUID()
        let nonce = UUID()
        let signature = Data([0x30, 0x45, 0x02, 0x20])
        let offer = SignedOffer(
            kind: .promotional, productId: Self.premium, offerId: "comeback50", jws: "a.b.c", keyId: "KEY1234567",
            nonce: nonce.uuidString.lowercased(), timestamp: 1_790_000_000_000,
            signature: signature.base64EncodedString(), appAccountToken: token.uuidString.lowercased())
        let eligibility = SignedOffer(
            kind: .introductoryEligibility, productId: Self.premium, offerId: nil, jws: "e.l.i", keyId: "KEY1234567",
            nonce: UUID().uuidString.lowercased(), timestamp: 1_790_000_000_000, allowIntroductoryOffer: false)
        let after = try await StoreKitTestScript.withScript(script) {
            _ = try await StoreKitBackend().purchase(
                Self.premium,
                options: .init(
                    appAccountToken: token, promotionalOffer: offer, introductoryOfferEligibility: eligibility,
                    winBackOfferID: "winback1"))
            await #expect(throws: KakinError.self, "a win-back offer the product does not have") {
                _ = try await StoreKitBackend().purchase(Self.premium, options: .init(winBackOfferID: "nope"))
            }
        }
        let options = try #require(after.purchases.first?.options)
        #expect(options.contains(.quantity(1)) && options.contains(.appAccountToken(token)))
        // Where iOS 26's StoreKit is (always, on Linux), the offer goes in its JWS form.
        #expect(Product.PurchaseOption.promotionalOffer("comeback50", compactJWS: "a.b.c").allSatisfy(options.contains))
        #expect(!options.contains { if case .promotionalOffer = $0.kind { true } else { false } })
        // Before iOS 26, the older signature form.
        #expect(
            try StoreKitBackend.promotionalOffer(.init(promotionalOffer: offer), inJWSForm: false) == [
                .promotionalOffer(
                    offerID: "comeback50", keyID: "KEY1234567", nonce: nonce, signature: signature,
                    timestamp: 1_790_000_000_000)
            ])
        var unsigned = offer
        unsigned.signature = nil
        #expect(throws: KakinError.self, "no older signature to fall back on") {
            try StoreKitBackend.promotionalOffer(.init(promotionalOffer: unsigned), inJWSForm: false)
        }
        #expect(options.contains(.introductoryOfferEligibility(compactJWS: "e.l.i")))
        #expect(options.contains { if case .winBackOffer(let chosen) = $0.kind { chosen.id == "winback1" } else { false } })
        #expect(after.purchases.count == 1, "the unknown win-back offer never reached StoreKit")
    }

    /// The app's window scene.
    @MainActor static let scene = UIWindowScene()

    @Test func aPurchaseConfirmsInTheScene() async throws {
        var script = Self.script()
        script.purchaseResults[Self.removeAd] = .success(.verified(Self.transaction(9, Self.removeAd)))
        let after = try await StoreKitTestScript.withScript(script) {
            _ = try await StoreKitBackend(confirmIn: { Self.scene }).purchase(
                Self.removeAd, quantity: 1, appAccountToken: nil)
            _ = try await StoreKitBackend(confirmIn: { nil }).purchase(Self.removeAd, quantity: 1, appAccountToken: nil)
            _ = try await StoreKitBackend().purchase(Self.removeAd, quantity: 1, appAccountToken: nil)
        }
        let scene = await MainActor.run { ObjectIdentifier(Self.scene) }
        #expect(after.confirmationScenes == [scene, nil, nil], "the app's scene when it has one")
    }

    @Test func pendingAndCancelledPurchasesAndAnUnknownProduct() async throws {
        var script = Self.script()
        script.purchaseResults[Self.premium] = .pending
        script.purchaseResults[Self.removeAd] = .userCancelled
        var results: [StorePurchaseResult] = []
        var unknown: KakinError?
        _ = try await StoreKitTestScript.withScript(script) {
            let backend = StoreKitBackend()
            results.append(try await backend.purchase(Self.premium, quantity: 1, appAccountToken: nil))
            results.append(try await backend.purchase(Self.removeAd, quantity: 1, appAccountToken: nil))
            do { _ = try await backend.purchase("com.example.kakin.gone", quantity: 1, appAccountToken: nil) } catch {
                unknown = error as? KakinError
            }
        }
        #expect(results == [.pending, .cancelled])
        #expect(unknown?.code == .productUnavailable)
    }

    @Test func anUnverifiedTransactionIsPassedOnForTheServerButNeverCountsOffline() async throws {
        var script = Self.script()
        let forged = VerificationResult<Transaction>.unverified(Self.transaction(9, Self.premium), .invalidSignature)
        script.purchaseResults[Self.premium] = .success(forged)
        script.unfinished = [forged]
        script.currentEntitlements = [forged, .verified(Self.transaction(8, Self.removeAd))]
        var purchased: StorePurchaseResult?
        var unfinished: [StoreTransaction] = []
        var offline: [StoreTransaction] = []
        _ = try await StoreKitTestScript.withScript(script) {
            let backend = StoreKitBackend()
            purchased = try await backend.purchase(Self.premium, quantity: 1, appAccountToken: nil)
            unfinished = try await backend.unfinishedTransactions()
            offline = try await backend.currentEntitlements()
        }
        // The server verifies the JWS and refuses it; the device does not decide.
        guard case .purchased(let transaction) = try #require(purchased) else {
            Issue.record("expected the transaction")
            return
        }
        #expect(transaction.id == "9")
        #expect(unfinished.map(\.id) == ["9"])
        // Offline, only what StoreKit verified counts.
        #expect(offline.map(\.id) == ["8"])
    }

    @Test func updatesAtLaunchAndFinishingAfterTheServerAcknowledged() async throws {
        var script = Self.script()
        let approved = Self.transaction(11, Self.premium, expires: Self.now.addingTimeInterval(30 * 86_400))
        script.updates = [.verified(approved)]
        script.unfinished = [.verified(approved), .verified(Self.transaction(12, Self.removeAd))]
        var first: StoreTransaction?
        var left: [StoreTransaction] = []
        let after = try await StoreKitTestScript.withScript(script) {
            let backend = StoreKitBackend()
            var updates = backend.transactionUpdates().makeAsyncIterator()
            first = await updates.next()
            if let first { try await backend.finish(first) }
            left = try await backend.unfinishedTransactions()
        }
        #expect(first?.id == "11" && first?.productType == .autoRenewableSubscription)
        #expect(first?.expirationDate == Self.now.addingTimeInterval(30 * 86_400))
        #expect(after.finished == [11])
        #expect(left.map(\.id) == ["12"])
    }

    @Test(arguments: [String?.some("USA"), "FRA", nil])
    func theStorefrontIsStoreKitsCurrentOne(countryCode: String?) async throws {
        var script = Self.script()
        script.storefrontCountryCode = countryCode
        var read: String?
        _ = try await StoreKitTestScript.withScript(script) {
            read = await StoreKitBackend().storefrontCountryCode()
        }
        #expect(read == countryCode)
    }

    @Test func restoreSyncsThenReturnsTheCurrentEntitlements() async throws {
        var script = Self.script()
        script.currentEntitlements = [.verified(Self.transaction(21, Self.removeAd))]
        script.canMakePayments = false
        var restored: [StoreTransaction] = []
        var canPay = true
        let after = try await StoreKitTestScript.withScript(script) {
            let backend = StoreKitBackend()
            canPay = try await backend.canMakePayments()
            restored = try await backend.restore()
        }
        #expect(!canPay)
        #expect(after.syncs == 1)
        #expect(restored.map(\.id) == ["21"])

        var failing = Self.script()
        failing.syncError = StoreKitError.networkError(URLError(.notConnectedToInternet))
        var failure: KakinError?
        _ = try await StoreKitTestScript.withScript(failing) {
            do { _ = try await StoreKitBackend().restore() } catch { failure = error as? KakinError }
        }
        let failed = failure?.code == .network
        #expect(failed, "a failed sync is reported, not a stale list")
    }

    @Test func theAppTransactionIsTheSharedOnesJWSVerifiedOrNot() async throws {
        let download = StoreKitTestScript.appTransaction(bundleID: "com.example.kakin", appTransactionID: "705000000001")
        for result in [VerificationResult.verified(download), .unverified(download, .invalidSignature)] {
            var script = Self.script()
            script.appTransaction = result
            script.appTransactionJWS = "eyJhbGciOiJFUzI1NiJ9.app.transaction"
            var jws: String?
            let after = try await StoreKitTestScript.withScript(script) {
                jws = try await StoreKitBackend().appTransaction()
            }
            #expect(jws == "eyJhbGciOiJFUzI1NiJ9.app.transaction", "the server verifies it")
            #expect(after.appTransactionReads == 1)
        }
        #expect(download.appTransactionID == "705000000001" && download.bundleID == "com.example.kakin")

        // StoreKit's failures are mapped as everywhere else: the network is retryable.
        var offline = Self.script()
        offline.appTransactionError = StoreKitError.networkError(URLError(.notConnectedToInternet))
        var failure: KakinError?
        _ = try await StoreKitTestScript.withScript(offline) {
            do { _ = try await StoreKitBackend().appTransaction() } catch { failure = error as? KakinError }
        }
        #expect(failure?.code == .network && failure?.isRetryable == true)
        // Without one (StoreKit throws), the store's failure.
        var none = Self.script()
        none.appTransaction = nil
        _ = try await StoreKitTestScript.withScript(none) {
            do { _ = try await StoreKitBackend().appTransaction() } catch { failure = error as? KakinError }
        }
        #expect(failure?.code == .storeFailure)
    }
}
#endif
