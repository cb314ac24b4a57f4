import AppStoreModels
import AppStoreSecurity
import Foundation
import KakinTestSupport
import StoreSandbox
import Testing

/// The engine selling from the example `.storekit` file, in the tester's storefront.
@Suite struct CatalogEngineTests {
    func engine() throws -> (SandboxEngine, SandboxClock) {
        let catalog = try ExampleApp.catalog()
        let clock = SandboxClock.manual(at: EngineFixture.start)
        let engine = try ExampleSandbox.engine(catalog: catalog, authority: EngineFixture.authority, clock: clock)
        return (engine, clock)
    }

    @Test func pricesFollowTheTestersStorefront() async throws {
        let (engine, _) = try engine()
        let japan = try await engine.createTester(name: "jp@example.com", storefront: "JPN")
        let usa = try await engine.createTester(name: "us@example.com", storefront: "USA")
        let yen = try #require(
            try await engine.purchase(.init(testerID: japan.id, productID: "com.example.kakin.removeAd")).transaction)
        #expect(yen.currency == "JPY")
        #expect(yen.priceMilliunits == 100_000)
        #expect(yen.storefrontID == "143462")
        let dollars = try #require(
            try await engine.purchase(.init(testerID: usa.id, productID: "com.example.kakin.removeAd")).transaction)
        #expect(dollars.currency == "USD")
        #expect(dollars.priceMilliunits == 990)
        await #expect(throws: SandboxError(.unknownProduct)) {
            try await engine.purchase(.init(testerID: usa.id, productID: "com.example.kakin.nothing"))
        }
    }

    @Test func subscriptionsUseTheCatalogsGroupLevelsAndOffers() async throws {
        let (engine, clock) = try engine()
        let tester = try await engine.createTester(name: "sub@example.com", storefront: "USA")
        let monthly = try #require(
            try await engine.purchase(.init(testerID: tester.id, productID: "com.example.kakin.premium.monthly"))
                .transaction)
        #expect(monthly.offerType == .introductory)
        #expect(monthly.subscriptionGroupID != nil)
        let yearly = try #require(
            try await engine.purchase(.init(testerID: tester.id, productID: "com.example.kakin.premium.yearly"))
                .transaction)
        #expect(yearly.originalID == monthly.id, "yearly is the higher level: an upgrade")
        clock.advance(by: 400 * 86_400)
        #expect(try await engine.processRenewals().map(\.notificationType).contains(.didRenew))
    }
}
