import AppStoreModels
import Foundation
import StoreSandbox
import Testing

@Suite struct InvalidProductTests {
    private func reasons(
        _ ids: [String], in storefront: Storefront = .usa, options: CatalogOptions? = nil
    ) throws -> [String: InvalidProductReason] {
        let catalog =
            try options.map { try SandboxCatalog.load(storeKitFile: CatalogFixtures.exampleStoreKitFile, options: $0) }
            ?? CatalogFixtures.exampleCatalog()
        let response = catalog.localizedProducts(for: ids, storefront: storefront)
        #expect(response.products.count + response.invalidIdentifiers.count == Set(ids).count)
        return Dictionary(uniqueKeysWithValues: response.invalidIdentifiers.map { ($0.identifier, $0.reason) })
    }

    @Test func unknownProduct() throws {
        let found = try reasons(["com.example.kakin.removeAds", "com.example.kakin.removeAd"])
        #expect(found == ["com.example.kakin.removeAds": .unknownProduct])
    }

    @Test(arguments: ["", " ", "com.example.kakin.remove Ad", "com..example", "com.example.", ".com", "広告"])
    func malformedIdentifiers(id: String) throws {
        #expect(try reasons([id]) == [id: .malformedIdentifier])
    }

    @Test func bundlePrefixMismatch() throws {
        let found = try reasons(["jp.cubic.PaymentManagerTest.removeAd", "com.example.kakinextra.removeAd"])
        #expect(found.values.allSatisfy { $0 == .bundlePrefixMismatch })
        #expect(found.count == 2)
        // Without a configured bundle ID, a foreign ID is simply unknown.
        #expect(
            try reasons(["jp.cubic.PaymentManagerTest.removeAd"], options: .init())
                == ["jp.cubic.PaymentManagerTest.removeAd": .unknownProduct])
    }

    @Test func notClearedForSale() throws {
        var options = CatalogOptions(bundleID: "com.example.kakin")
        options.notClearedForSale = ["com.example.kakin.unlock"]
        #expect(
            try reasons(["com.example.kakin.unlock"], options: options) == [
                "com.example.kakin.unlock": .notClearedForSale
            ])
    }

    @Test func notAvailableInStorefront() throws {
        var options = CatalogOptions()
        options.makeUnavailable("com.example.kakin.premium.yearly", in: .germany)
        let id = "com.example.kakin.premium.yearly"
        #expect(try reasons([id], in: .germany, options: options) == [id: .notAvailableInStorefront])
        #expect(try reasons([id], in: .japan, options: options).isEmpty)
        let catalog = try CatalogFixtures.exampleCatalog()
        let invalid = catalog.localizedProducts(for: ["com.example.kakin.seasonPass"], storefront: .china)
            .invalidIdentifiers
        #expect(invalid.first?.message.contains("CHN") == true)
    }

    @Test func priceUnavailableInAStorefrontOutsideTheTable() throws {
        let korea = Storefront(countryCode: "KOR", identifier: "143466", currencyCode: "KRW", localeIdentifier: "ko_KR")
        let found = try reasons(["com.example.kakin.removeAd"], in: korea)
        #expect(found == ["com.example.kakin.removeAd": .priceUnavailable])
        #expect(throws: SandboxError(.priceUnavailable)) {
            try CatalogFixtures.exampleCatalog().localizedProduct(id: "com.example.kakin.removeAd", storefront: korea)
        }
    }

    @Test func wildcardAppIDMakesEveryIDInvalid() throws {
        let found = try reasons(
            ["com.example.kakin.removeAd", "x"], options: CatalogOptions(bundleID: "com.example.*"))
        #expect(found == ["com.example.kakin.removeAd": .wildcardAppID, "x": .wildcardAppID])
    }

    @Test(arguments: [
        InvalidProductReason.paidAppsAgreementMissing, .provisioningProfileInvalid, .binaryRejected,
    ])
    func appProblemsMakeEveryIDInvalid(problem: InvalidProductReason) throws {
        let found = try reasons(CatalogFixtures.exampleProductIDs, options: CatalogOptions(appProblem: problem))
        #expect(found.count == CatalogFixtures.exampleProductIDs.count)
        #expect(Set(found.values) == [problem])
    }

    @Test func everyReasonHasAMessage() {
        for reason in InvalidProductReason.allCases {
            #expect(reason.message.count > 20)
            #expect(reason.message.hasSuffix("."))
        }
        #expect(InvalidProductReason.allCases.filter(\.isAppLevel).count == 4)
    }

    @Test func singleProductErrors() throws {
        let catalog = try CatalogFixtures.exampleCatalog()
        #expect(throws: SandboxError(.unknownProduct)) {
            try catalog.localizedProduct(id: "com.example.kakin.nothing", storefront: .usa)
        }
        #expect(throws: SandboxError(.unknownProduct)) { try catalog.localizedProduct(id: "", storefront: .usa) }
        #expect(throws: SandboxError(.productUnavailable)) {
            try catalog.localizedProduct(id: "com.example.kakin.seasonPass", storefront: .china)
        }
    }

    @Test func invalidIdentifierCodable() throws {
        let entry = InvalidProductIdentifier(identifier: "a.b", reason: .unknownProduct)
        #expect(entry.message == InvalidProductReason.unknownProduct.message)
        let data = try JSONEncoder().encode(entry)
        let object = try JSONSerialization.jsonObject(with: data) as? [String: String]
        #expect(object?["reason"] == "unknownProduct")
        #expect(try JSONDecoder().decode(InvalidProductIdentifier.self, from: data) == entry)
    }
}
