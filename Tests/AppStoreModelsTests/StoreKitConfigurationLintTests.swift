import AppStoreModels
import Foundation
import KakinTestSupport
import Testing

@Suite struct StoreKitConfigurationLintTests {
    private static func configuration(_ json: String) throws -> StoreKitConfiguration {
        try StoreKitConfiguration.load(from: Data(json.utf8))
    }

    private static func product(
        _ id: String, type: String = "Consumable", price: String? = "0.99",
        localizations: String = #"[{"displayName":"Coins","description":"A bag of coins.","locale":"en_US"}]"#
    ) -> String {
        let priceField = price.map { #""displayPrice":"\#($0)","# } ?? ""
        return #"{\#(priceField)"productID":"\#(id)","type":"\#(type)","localizations":\#(localizations)}"#
    }

    private static func subscription(_ id: String, level: Int?) -> String {
        let levelField = level.map { #""groupNumber":\#($0),"# } ?? ""
        return #"""
            {\#(levelField)"displayPrice":"4.99","productID":"\#(id)","type":"RecurringSubscription",
             "recurringSubscriptionPeriod":"P1M","subscriptionGroupID":"G",
             "localizations":[{"displayName":"Premium","description":"Everything, every month.","locale":"en_US"}]}
            """#
    }

    private func problems(
        _ json: String, bundleID: String? = nil, hosted: Set<String> = []
    ) throws
        -> [StoreKitConfigurationLint.Problem]
    {
        StoreKitConfigurationLint(bundleID: bundleID, hostedContentProductIDs: hosted)
            .problems(in: try Self.configuration(json))
    }

    @Test func theExampleCatalogIsClean() throws {
        let url = ExampleApp.storeKitFile
        let configuration = try StoreKitConfiguration.load(from: Data(contentsOf: url))
        let lint = StoreKitConfigurationLint(
            bundleID: "com.example.kakin", hostedContentProductIDs: ["com.example.kakin.soundPack"])
        #expect(lint.problems(in: configuration) == [])
    }

    @Test(arguments: ["com.example.coins", "coins_100", "A1.b2", "x"])
    func wellFormedProductIDs(id: String) {
        #expect(StoreKitConfigurationLint.isValidProductID(id))
    }

    @Test(arguments: ["", "com.example.coins-100", "coins 100", "coins/100", "münzen", "coins!"])
    func malformedProductIDs(id: String) {
        #expect(!StoreKitConfigurationLint.isValidProductID(id))
    }

    @Test func productIDsMustBePresentWellFormedAndUnique() throws {
        let found = try problems(
            #"{"products":[\#(Self.product("a.coins")),\#(Self.product("")),\#(Self.product("a.bad-id"))],"#
                + #""nonRenewingSubscriptions":[\#(Self.product("a.coins", type: "NonRenewingSubscription"))]}"#)
        #expect(
            found == [
                .init(
                    severity: .error, productID: nil, path: "products[1].productID",
                    message: "the product has no product ID"),
                .init(
                    severity: .error, productID: "a.bad-id", path: "products[2].productID",
                    message: "a product ID may contain only letters, digits, underscores and periods"),
                .init(
                    severity: .error, productID: "a.coins", path: "nonRenewingSubscriptions[0].productID",
                    message: "the product ID is already used at products[0]; product IDs must be unique"),
            ])
    }

    @Test func everyProductNeedsAPrice() throws {
        let found = try problems(
            #"{"products":[\#(Self.product("a.free", price: nil)),\#(Self.product("a.odd", price: "1,99"))]}"#)
        #expect(found.map(\.path) == ["products[0].displayPrice", "products[1].displayPrice"])
        #expect(found.allSatisfy { $0.severity == .error })
        #expect(found[0].message == "the product has no price")
        #expect(found[1].message == #"the price "1,99" is not a plain number such as 0.99"#)
    }

    @Test func localizationsNeedANameAndALongEnoughDescription() throws {
        let localizations = #"""
            [{"displayName":"Coins","description":"Coins.","locale":"en_US"},
             {"displayName":" ","description":"Des pièces d'or.","locale":"fr_FR"},
             {"displayName":"Münzen","description":"  Zehn Münzen ","locale":"de_DE"}]
            """#
        let found = try problems(#"{"products":[\#(Self.product("a.coins", localizations: localizations))]}"#)
        #expect(
            found == [
                .init(
                    severity: .error, productID: "a.coins", path: "products[0].localizations[0].description",
                    message:
                        "the localization (en_US) has a description of 6 characters; App Store Connect needs at least 10"
                ),
                .init(
                    severity: .error, productID: "a.coins", path: "products[0].localizations[1].displayName",
                    message: "the localization (fr_FR) has no display name"),
            ])
    }

    @Test func aProductWithoutLocalizationsIsAWarning() throws {
        let found = try problems(#"{"products":[\#(Self.product("a.coins", localizations: "[]"))]}"#)
        #expect(found.map(\.severity) == [.warning])
        #expect(found.first?.path == "products[0].localizations")
    }

    @Test func hostedContentOnlyOnNonConsumables() throws {
        let json = #"""
            {"products":[\#(Self.product("a.coins")),\#(Self.product("a.pack", type: "NonConsumable"))]}
            """#
        let found = try problems(json, hosted: ["a.coins", "a.pack", "a.gone"])
        #expect(
            found == [
                .init(
                    severity: .error, productID: "a.coins", path: "products[0]",
                    message: "only non-consumables can have hosted content, and this is a Consumable"),
                .init(
                    severity: .warning, productID: "a.gone", path: "hostedContent",
                    message: "hosted content is declared for a product the file does not have"),
            ])
    }

    @Test func subscriptionsNeedTheirOwnLevelInTheirGroup() throws {
        let json = #"""
            {"subscriptionGroups":[
              {"id":"G","name":"Premium","subscriptions":[\#(Self.subscription("a.monthly", level: 1)),
                \#(Self.subscription("a.yearly", level: 1)),\#(Self.subscription("a.weekly", level: nil)),
                \#(Self.subscription("a.daily", level: 0))]},
              {"id":"H","name":"Other","subscriptions":[\#(Self.subscription("a.other", level: 1))]}]}
            """#
        let found = try problems(json)
        #expect(
            found == [
                .init(
                    severity: .error, productID: "a.yearly", path: "subscriptionGroups[0].subscriptions[1].groupNumber",
                    message: "level 1 is already taken by a.monthly; each subscription in a group needs its own level"),
                .init(
                    severity: .error, productID: "a.weekly", path: "subscriptionGroups[0].subscriptions[2].groupNumber",
                    message: "the subscription has no level in its group"),
                .init(
                    severity: .error, productID: "a.daily", path: "subscriptionGroups[0].subscriptions[3].groupNumber",
                    message: "the level 0 is not a positive number"),
            ])
    }

    @Test func productIDsOutsideTheBundleIDAreWarnings() throws {
        let json = #"""
            {"products":[\#(Self.product("com.example.app.coins")),\#(Self.product("com.example.app")),
              \#(Self.product("com.example.application.coins")),\#(Self.product("coins"))]}
            """#
        let found = try problems(json, bundleID: "com.example.app")
        #expect(found.map(\.productID) == ["com.example.app", "com.example.application.coins", "coins"])
        #expect(found.allSatisfy { $0.severity == .warning })
        #expect(found.first?.message == #"the product ID does not start with the bundle ID "com.example.app.""#)
        #expect(try problems(json, bundleID: "com.example.*").isEmpty)
    }

    @Test func problemsReadAsOneLine() {
        let problem = StoreKitConfigurationLint.Problem(
            severity: .error, productID: "a.coins", path: "products[0].displayPrice",
            message: "the product has no price")
        #expect(problem.description == "error: a.coins (products[0].displayPrice): the product has no price")
        let anonymous = StoreKitConfigurationLint.Problem(
            severity: .warning, productID: nil, path: "products[1].productID", message: "m")
        #expect(anonymous.description == "warning: products[1].productID: m")
    }
}
