import AppStoreModels
import Foundation
import StoreSandbox
import Testing

@Suite struct CommitmentPlanCatalogTests {
    @Test func theExampleSideFileSellsTheYearlyPlanMonthly() throws {
        let catalog = try CatalogFixtures.exampleCatalog()
        let yearly = CatalogFixtures.prefix + "premium.yearly"
        #expect(catalog.options.commitmentPlans[yearly]?.commitmentPrice == Decimal(string: "59.88"))
        let usa = try #require(catalog.commitmentPlan(id: yearly, storefront: "USA"))
        #expect(usa.commitmentPriceMilliunits == 59_880)
        #expect(usa.monthlyPriceMilliunits == 4_990)
        #expect(usa.totalBillingPeriods == 12)
        let japan = try #require(catalog.commitmentPlan(id: yearly, storefront: "JPN"))
        #expect(japan.monthlyPriceMilliunits % 1_000 == 0, "yen are billed in whole units")
        #expect(japan.monthlyPriceMilliunits * 12 <= japan.commitmentPriceMilliunits)
        #expect(catalog.commitmentPlan(id: CatalogFixtures.prefix + "premium.monthly", storefront: "USA") == nil)
        #expect(catalog.commitmentPlan(id: yearly, storefront: "XXX") == nil)
    }

    @Test func withoutAPriceTheCommitmentCostsTheYearUpFront() throws {
        let file = try CatalogFixtures.exampleConfiguration()
        let yearly = CatalogFixtures.prefix + "premium.yearly"
        let catalog = try SandboxCatalog(
            configuration: file, options: CatalogOptions(commitmentPlans: [yearly: .init()]))
        let plan = try #require(catalog.commitmentPlan(id: yearly, storefront: "USA"))
        #expect(plan.commitmentPriceMilliunits == 49_990)
        #expect(plan.monthlyPriceMilliunits == 4_160)
    }

    @Test func onlyAYearlySubscriptionCanHaveOne() throws {
        let file = try CatalogFixtures.exampleConfiguration()
        for name in ["premium.monthly", "removeAd"] {
            #expect(throws: SandboxError(.catalogInvalid)) {
                try SandboxCatalog(
                    configuration: file,
                    options: CatalogOptions(commitmentPlans: [CatalogFixtures.prefix + name: .init()]))
            }
        }
        #expect(throws: SandboxError(.catalogInvalid)) {
            try SandboxCatalog(configuration: file, options: CatalogOptions(commitmentPlans: ["nope": .init()]))
        }
    }

    @Test func theSideFileRejectsAPriceThatIsNotANumber() {
        for text in ["\"abc\"", "\"-1\"", "\"0\"", "12"] {
            let json = #"{"commitmentPlans": {"p": {"commitmentPrice": \#(text)}}}"#
            #expect(throws: SandboxError(.catalogInvalid)) { try CatalogOptions.load(from: Data(json.utf8)) }
        }
        let round = try? CatalogOptions.load(
            from: Data(#"{"commitmentPlans": {"p": {"commitmentPrice": "59.88"}}}"#.utf8))
        #expect(round?.commitmentPlans["p"]?.commitmentPrice == Decimal(string: "59.88"))
    }
}
