import AppStoreModels
import Foundation
import Kakin
import StoreSandbox
import Synchronization
import Testing

/// Offer codes redeemed through the SDK against a live purchase server and sandbox App Store, the
/// way StoreKit redeems them since iOS 27: the sheet returns the transaction, which is delivered
/// through the outbox as a purchase is, granted by the server and then finished at the store.
@MainActor @Suite struct OfferCodeRedemptionTests {
    nonisolated static let monthly = "com.example.kakin.premium.monthly"
    nonisolated static let code = "SPRING27"

    /// The example catalog with a three-month offer for the monthly subscription and a code for it.
    static func stack() async throws -> LiveStack {
        try await LiveStack { options in
            options.codeOffers[Self.monthly] = [
                StoreKitConfiguration.SubscriptionOffer(
                    internalID: "7B2E0C27", offerID: "spring3months", referenceName: "Spring Three Months",
                    paymentMode: .payAsYouGo, subscriptionPeriod: "P1M", numberOfPeriods: 3, displayPrice: "0.99")
            ]
            options.offerCodes[Self.code] = .init(productID: Self.monthly, offerID: "spring3months")
        }
    }

    /// What the customer types into the sheet, one entry a sheet; `nil` closes it.
    final class Typing: Sendable {
        let codes: Mutex<[String?]>
        init(_ codes: [String?]) { self.codes = Mutex(codes) }
        func next() -> String? { codes.withLock { $0.isEmpty ? nil : $0.removeFirst() } }
    }

    @Test func aRedeemedCodeIsDeliveredAndGrantedLikeAPurchase() async throws {
        let stack = try await Self.stack()
        try await stack.run { @MainActor sandboxURL, serverURL in
            _ = try await stack.engine.createTester(name: "us@example.com", storefront: "USA", id: "us")
            let typing = Typing([Self.code.lowercased(), nil, Self.code])
            let backend = SandboxBackend(
                baseURL: sandboxURL, testerID: "us", pollSeconds: 1, offerCodeSheet: { typing.next() })
            let store = try await KakinStore.configure(
                .init(
                    serverURL: serverURL, bundleID: LiveStack.bundleID, publishableKey: "pk_test",
                    serverKey: stack.serverKey.publicKey, appUserID: "hana",
                    storageDirectory: stack.directory.appendingPathComponent("phone")),
                backend: backend)

            let outcome = try await store.redeemOfferCode()
            guard case .redeemed(let transaction, let customer?) = outcome else {
                Issue.record("expected a delivered redemption, got \(outcome)")
                return
            }
            #expect(transaction.productID == Self.monthly)
            #expect(customer.isEntitled(to: "premium"))
            #expect(store.customerInfo?.isEntitled(to: "premium") == true)
            let redeemed = try #require(await stack.engine.snapshot.transactions[transaction.id])
            #expect(redeemed.offerType == .offerCode && redeemed.offerIdentifier == "spring3months")
            #expect(try await backend.unfinishedTransactions().isEmpty, "finished once the server had it")
            #expect(await store.payments.pendingDeliveries().isEmpty)

            // The customer closes the sheet: nothing happens.
            #expect(try await store.redeemOfferCode() == .cancelled)
            // The same code again: the App Store's refusal, kept in lastError.
            await #expect(throws: PaymentError.ineligibleForOffer) { try await store.redeemOfferCode() }
            #expect(store.lastError == .ineligibleForOffer)
            await store.shutdown()
        }
    }

    @Test func aSandboxBackendWithoutASheetHasNoRedemption() async throws {
        let backend = SandboxBackend(baseURL: URL(string: "http://127.0.0.1:9")!, testerID: "us")
        await #expect(throws: KakinError.self) { _ = try await backend.presentOfferCodeRedeemSheet() }
        do { _ = try await backend.presentOfferCodeRedeemSheet() } catch let error as KakinError {
            #expect(error.code == .unsupported)
        }
    }
}
