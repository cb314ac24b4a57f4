import Foundation
import Kakin
import Testing

/// What a SwiftUI app's model does with ``KakinStore``, against a live purchase server and sandbox
/// App Store: configure in one call, show products and prices, buy, restore on a second device,
/// and show the entitlements the server granted.
@MainActor @Suite struct KakinStoreEndToEndTests {
    @Test func anAppBuysRestoresAndShowsEntitlementsThroughTheStore() async throws {
        let stack = try await LiveStack()
        try await stack.run { @MainActor sandboxURL, serverURL in
            _ = try await stack.engine.createTester(name: "jp@example.com", storefront: "JPN", id: "jp")
            func configure(_ device: String) async throws -> KakinStore {
                try await KakinStore.configure(
                    .init(
                        serverURL: serverURL, bundleID: LiveStack.bundleID, publishableKey: "pk_test",
                        serverKey: stack.serverKey.publicKey, appUserID: "hana",
                        storageDirectory: stack.directory.appendingPathComponent(device)),
                    backend: SandboxBackend(baseURL: sandboxURL, testerID: "jp", pollSeconds: 1))
            }
            let phone = try await configure("phone")
            #expect(phone.customerInfo?.source == .server)
            #expect(phone.customerInfo?.isEntitled(to: "removeAds") == false)

            await phone.loadProducts(["com.example.kakin.removeAd", "com.example.kakin.premium.monthly"])
            #expect(phone.products.map(\.id) == ["com.example.kakin.removeAd", "com.example.kakin.premium.monthly"])
            #expect(phone.products.first?.currencyCode == "JPY", "the tester's storefront prices it")
            #expect(phone.products.last?.subscriptionPeriodValue?.unit == .month)

            let outcome = try await phone.purchase(try #require(phone.products.first))
            guard case .purchased(_, let customer?) = outcome else {
                Issue.record("expected a delivered purchase, got \(outcome)")
                return
            }
            #expect(customer.isEntitled(to: "removeAds"))
            #expect(phone.customerInfo?.isEntitled(to: "removeAds") == true && !phone.isPurchasing)
            await phone.shutdown()

            // A second device of the same customer restores and shows the same entitlement.
            let tablet = try await configure("tablet")
            let restored = try await tablet.restore()
            #expect(tablet.lastError == nil)
            #expect(restored.isEntitled(to: "removeAds") && restored == tablet.customerInfo)
            await tablet.shutdown()
        }
    }
}
