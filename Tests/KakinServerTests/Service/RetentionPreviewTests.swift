import AppStoreModels
import Foundation
import KakinLedger
import KakinServer
import KakinTestSupport
import StoreSandbox
import Testing

@Suite("Retention rules preview: what the rules would answer, read from the ledger, nothing recorded")
struct RetentionPreviewTests {
    static let policy = RetentionPolicy(rules: [
        RetentionRule(name: "french", locales: ["fr"], answer: .message(messageID: "fr-message")),
        RetentionRule(
            name: "switch", states: [.paid, .trial], maxTenureDays: 60,
            answer: .alternateProduct(productID: ExampleApp.productID("premium.yearly"), messageID: "yearly")),
    ])

    static func service(_ fixture: ServerFixture) throws -> PurchaseService {
        PurchaseService.example(
            store: fixture.store, root: ServerFixture.authority.root, grants: try ExampleApp.grants(),
            now: { fixture.clock.now() }
        ) { app in app.retention = policy }
    }

    @Test("a subscriber the ledger knows: the matching rule and what it shows; later, no rule")
    func matchingRuleThenNone() async throws {
        let fixture = try await ServerFixture()
        let service = try Self.service(fixture)
        let (purchase, jws) = try await fixture.buy("premium.monthly", tester: "alice")
        _ = try await service.submitTransaction(jws, bundleID: ExampleApp.bundleID, appUserID: "alice")

        let preview = try await service.previewRetention(
            bundleID: ExampleApp.bundleID, originalTransactionID: purchase.originalID, locale: "en-US")
        #expect(preview.subscriber?.productID == ExampleApp.productID("premium.monthly"))
        #expect(preview.rule?.name == "switch")
        #expect(
            preview.answer == .alternateProduct(productID: ExampleApp.productID("premium.yearly"), messageID: "yearly"))
        #expect(preview.lines.contains("rule: switch"))

        let french = try await service.previewRetention(
            bundleID: ExampleApp.bundleID, originalTransactionID: purchase.originalID, locale: "fr-FR")
        #expect(french.answer == .message(messageID: "fr-message"))

        fixture.clock.advance(by: 61 * 86_400)
        let later = try await service.previewRetention(
            bundleID: ExampleApp.bundleID, originalTransactionID: purchase.originalID, locale: "en-US")
        #expect(later.subscriber?.tenureDays == 61)
        #expect(later.rule == nil)
        #expect(later.lines.last?.hasPrefix("no rule matches") == true)
        try await fixture.store.shutdown()
    }

    @Test("an unknown transaction has no subscriber; an unknown app is refused")
    func unknownTransactionAndApp() async throws {
        let fixture = try await ServerFixture()
        let service = try Self.service(fixture)
        let unknown = try await service.previewRetention(
            bundleID: ExampleApp.bundleID, originalTransactionID: "404", locale: "en-US")
        #expect(unknown.subscriber == nil)
        #expect(unknown.rule == nil)
        #expect(
            unknown.lines == [
                "the ledger knows no subscription 404 of \(ExampleApp.bundleID): the server answers with no choice, and the App Store shows the default message"
            ])
        await #expect(throws: ServerError.self) {
            try await service.previewRetention(
                bundleID: "com.example.none", originalTransactionID: "1", locale: "en-US")
        }
        try await fixture.store.shutdown()
    }

    @Test("a rule's conditions and answer in words")
    func ruleSummary() {
        let rule = RetentionRule(
            name: "loyal", states: [.paid], minTenureDays: 180, refunded: false,
            minLifetimeValue: RetentionAmount(currency: "USD", milliunits: 49_990),
            answer: .promotionalOffer(offerID: "stay", messageID: "m"))
        #expect(
            rule.conditions == [
                "states: paid", "tenure: at least 180 days", "refunded: never", "lifetime value: at least 49.99 USD",
            ])
        #expect(rule.answer.summary == "message m, with the promotional offer stay")
        #expect(RetentionRule(name: "all", answer: .message(messageID: "m")).conditions.isEmpty)
    }
}
