import Foundation
import Kakin
import KakinShopModel
import Testing

/// Product IDs of the example catalog.
enum Catalog {
    static let removeAd = "com.example.kakin.removeAd"
    static let increasePoints = "com.example.kakin.increasePoints"
    static let soundPack = "com.example.kakin.soundPack"
    static let seasonPass = "com.example.kakin.seasonPass"
    static let monthly = "com.example.kakin.premium.monthly"
    static let yearly = "com.example.kakin.premium.yearly"
}

extension KakinServe {
    /// A shop as the app makes it, on a "device" of its own (its storage folder and the sandbox's
    /// stand-in for `identifierForVendor`), signed in to the sandbox as `tester`: the server key
    /// fetched once and pinned, the SDK's `SandboxBackend` as the store, downloads in 64 KiB chunks.
    @MainActor
    func shop(tester: String, device: String, time: SandboxTime? = nil) async throws -> ShopModel {
        let serverKey = try await KakinServerClient.fetchServerKey(baseURL: serverURL)
        let storage = directory.appendingPathComponent("devices/\(device)", isDirectory: true)
        let model = time.map { time in ShopModel(now: { time.now }) } ?? ShopModel()
        await model.configure(
            ShopConfiguration(
                store: .init(
                    serverURL: serverURL, bundleID: Self.bundleID, publishableKey: publishableKey,
                    serverKey: serverKey, storageDirectory: storage.appendingPathComponent("kakin")),
                contentDirectory: storage.appendingPathComponent("content"), contentChunkSize: 64 * 1024),
            backend: SandboxBackend(baseURL: sandboxURL, testerID: tester, pollSeconds: 1))
        #expect(model.phase == .ready)
        #expect(model.notice == nil, "\(model.notice?.message ?? "")")
        return model
    }

    /// Runs `body` with a shop made as ``shop(tester:device:time:)`` does, and shuts the shop down
    /// afterwards (its store stops polling the sandbox), whatever `body` did.
    @MainActor
    func withShop<Result>(
        tester: String, device: String, time: SandboxTime? = nil, _ body: (ShopModel) async throws -> Result
    ) async throws -> Result {
        let shop = try await shop(tester: tester, device: device, time: time)
        do {
            let result = try await body(shop)
            await shop.shutdown()
            return result
        } catch {
            await shop.shutdown()
            throw error
        }
    }
}

extension ShopModel {
    /// The loaded product `id`.
    func product(_ id: String, sourceLocation: SourceLocation = #_sourceLocation) throws -> StoreProduct {
        try #require(paywall.items.first { $0.id == id }?.product, "\(id) is not on the paywall", sourceLocation: sourceLocation)
    }

    /// The paywall's item for `id`.
    func item(_ id: String, sourceLocation: SourceLocation = #_sourceLocation) throws -> PaywallItem {
        try #require(paywall.items.first { $0.id == id }, "\(id) is not on the paywall", sourceLocation: sourceLocation)
    }

    /// The entitlement `identifier` as the server last answered.
    func entitlement(_ identifier: String) -> CustomerInfo.Entitlement? {
        customer?.entitlements.first { $0.identifier == identifier }
    }
}
