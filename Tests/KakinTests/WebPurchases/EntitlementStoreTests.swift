import Foundation
import KakinCore
import KakinWire
import Testing

@testable import Kakin

/// Where each entitlement was paid for, and where the customer manages it: said by the server,
/// kept in the device's cache, and kept while the server cannot be reached.
@Suite struct EntitlementStoreTests {
    static let now = Date(timeIntervalSince1970: 1_790_000_000)

    static func entitlement(_ identifier: String, store: PurchaseStore?, id: String = "1") -> CustomerInfo.Entitlement {
        .init(
            identifier: identifier, productID: "com.example.kakin.\(identifier)", isActive: true,
            transactionID: id, originalTransactionID: id, store: store)
    }

    @Test(arguments: [
        (PurchaseStore?.some(.stripe), EntitlementManagement.web(nil)),
        (.appStore, .appStore),
        (nil, .appStore),
    ])
    func eachEntitlementIsManagedWhereItWasPaid(store: PurchaseStore?, management: EntitlementManagement) {
        let entitlement = Self.entitlement("premium", store: store)
        #expect(entitlement.management == management)
        #expect(entitlement.isWebPurchase == (store == .stripe))
    }

    @Test func theCacheKeepsTheStoreAndAnOlderCacheStillReads() throws {
        let customer = CustomerInfo(
            appUserID: "mia",
            entitlements: [Self.entitlement("premium", store: .stripe), Self.entitlement("removeAds", store: .appStore, id: "2")],
            balances: [:])
        let data = try JSONEncoder().encode(customer)
        #expect(try JSONDecoder().decode(CustomerInfo.self, from: data) == customer)

        // A cache written before entitlements said where they were paid for.
        let older = Data(
            #"""
            {"appUserID": "mia", "balances": {}, "source": "server", "entitlements": [
              {"identifier": "removeAds", "productId": "com.example.kakin.removeAd", "isActive": true,
               "transactionId": "2", "originalTransactionId": "2"}]}
            """#.utf8)
        let read = try JSONDecoder().decode(CustomerInfo.self, from: older)
        #expect(read.entitlements.first?.store == nil)
        #expect(read.entitlements.first?.management == .appStore)
        #expect(read.isEntitled(to: "removeAds"))
    }

    @Test func whileTheServerIsUnreachableWebPurchasesLastAsTheServerLastSaid() async throws {
        let directory = temporaryDirectory("kakin-offline-web")
        defer { try? FileManager.default.removeItem(at: directory) }
        let offline = OfflineEntitlements(directory: directory)
        let store = FakeStore(clock: { Self.now })
        let appStore = store.makeTransaction(FakeStore.removeAd)
        await offline.learn(
            from: CustomerInfo(
                appUserID: "mia",
                entitlements: [
                    Self.entitlement("premium", store: .stripe, id: "pi_1"),
                    .init(
                        identifier: "removeAds", productID: FakeStore.removeAd, isActive: true,
                        transactionID: appStore.id, originalTransactionID: appStore.id, store: .appStore),
                ],
                balances: [:]),
            at: Self.now)

        // Read again from its file, as on the next launch.
        let reopened = OfflineEntitlements(directory: directory)
        let customer = await reopened.customer(appUserID: "mia", transactions: [appStore], at: Self.now)
        #expect(customer.isProvisional)
        #expect(customer.isEntitled(to: "premium", at: Self.now), "paid on the web: the store cannot vouch for it")
        #expect(customer.entitlements.first { $0.identifier == "premium" }?.management == .web(nil))
        #expect(customer.entitlements.first { $0.identifier == "removeAds" }?.store == .appStore)

        // Not past the offline grace period.
        let later = Self.now.addingTimeInterval(OfflineEntitlements.defaultGracePeriod + 1)
        let lapsed = await reopened.customer(appUserID: "mia", transactions: [appStore], at: later)
        #expect(!lapsed.isEntitled(to: "premium", at: later))
        #expect(!lapsed.isEntitled(to: "removeAds", at: later))
    }
}
