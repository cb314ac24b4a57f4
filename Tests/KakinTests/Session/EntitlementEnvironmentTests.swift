import Foundation
import KakinWire
import Testing

@testable import Kakin

/// Which App Store granted each entitlement reaches the app and stays on the device: in
/// `CustomerInfo`, in the offline cache, and in entitlements computed while the server is away.
@Suite struct EntitlementEnvironmentTests {
    static let now = Date(timeIntervalSince1970: 1_790_000_000)

    static func answer(for user: String) -> CustomerInfo {
        CustomerInfo(
            appUserID: user,
            entitlements: [
                .init(
                    identifier: "removeAds", productID: FakeStore.removeAd, isActive: true, transactionID: "11",
                    originalTransactionID: "11", environment: .sandbox),
                .init(
                    identifier: "premium", productID: FakeStore.premium, isActive: true,
                    expiresDate: now.addingTimeInterval(86_400), transactionID: "13", originalTransactionID: "12",
                    environment: .production),
            ], balances: [:])
    }

    @Test func customerInfoKeepsTheEnvironmentThroughJSON() throws {
        let customer = Self.answer(for: "ines")
        let decoded = try JSONDecoder().decode(CustomerInfo.self, from: JSONEncoder().encode(customer))
        #expect(decoded == customer)
        #expect(decoded.entitlements.map(\.environment) == [.sandbox, .production])
        // What a server answer says arrives as is; an environment a later App Store adds reads as unknown.
        let wire = #"{"identifier":"x","productId":"p","isActive":true,"transactionId":"1","originalTransactionId":"1","environment":"Sandbox"}"#
        #expect(try JSONDecoder().decode(CustomerInfo.Entitlement.self, from: Data(wire.utf8)).environment == .sandbox)
        let later = wire.replacingOccurrences(of: "Sandbox", with: "SomewhereNew")
        #expect(try JSONDecoder().decode(CustomerInfo.Entitlement.self, from: Data(later.utf8)).environment == nil)
    }

    @Test func theOfflineCacheAndDeviceEntitlementsKeepIt() async throws {
        let directory = temporaryDirectory("environment")
        defer { try? FileManager.default.removeItem(at: directory) }
        await OfflineEntitlements(directory: directory).learn(from: Self.answer(for: "ines"), at: Self.now)

        // Another launch: what the store's own transactions give carries what the server said.
        let reopened = OfflineEntitlements(directory: directory)
        let store = FakeStore(clock: { Self.now })
        var renewal = store.makeTransaction(FakeStore.premium, expires: Self.now.addingTimeInterval(3600))
        renewal.originalID = "12"
        var removeAd = store.makeTransaction(FakeStore.removeAd)
        removeAd.originalID = "11"
        let unknown = store.makeTransaction("com.example.kakin.soundPack")
        let device = await reopened.customer(
            appUserID: "ines", transactions: [renewal, removeAd, unknown], at: Self.now)
        #expect(device.source == .device)
        let environments = Dictionary(uniqueKeysWithValues: device.entitlements.map { ($0.identifier, $0.environment) })
        #expect(environments == ["premium": .production, "removeAds": .sandbox, "com.example.kakin.soundPack": nil])
        // Another user's answer says nothing about this one's purchases.
        let stranger = await reopened.customer(appUserID: "someone", transactions: [removeAd], at: Self.now)
        #expect(stranger.entitlements.map(\.environment) == [nil])
    }
}
