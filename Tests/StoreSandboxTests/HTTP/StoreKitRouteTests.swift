import AppStoreModels
import AppStoreSecurity
import Foundation
import Hummingbird
import HummingbirdTesting
import KakinTestSupport
import StoreSandbox
import Testing

/// A catalog with win-back and offer-code offers in the `.storekit` file and in the side file.
enum OfferCatalog {
    static let localization = [
        StoreKitConfiguration.Localization(
            description: "A product made for tests.", displayName: "Test", locale: "en_US")
    ]

    static func configuration() -> StoreKitConfiguration {
        let monthly = StoreKitConfiguration.Subscription(
            codeOffers: [
                .init(offerID: "spring", paymentMode: .free, subscriptionPeriod: "P1M", numberOfPeriods: 1)
            ],
            displayPrice: "4.99", groupNumber: 1, localizations: localization, productID: "com.example.kakin.monthly",
            recurringSubscriptionPeriod: "P1M", referenceName: "Monthly", subscriptionGroupID: "G1",
            type: .recurringSubscription,
            winbackOffers: [
                .init(offerID: "comeBack", paymentMode: .payUpFront, subscriptionPeriod: "P1M", displayPrice: "0.99")
            ])
        return StoreKitConfiguration(
            identifier: "OFFERS",
            products: [
                .init(
                    displayPrice: "0.99", familyShareable: false, localizations: localization,
                    productID: "com.example.kakin.coins", referenceName: "Coins", type: .consumable)
            ],
            settings: .init(locale: "en_US", storefront: "USA"),
            subscriptionGroups: [.init(id: "G1", name: "Premium", subscriptions: [monthly])],
            version: .init(major: 4, minor: 0))
    }

    static func options() throws -> CatalogOptions {
        try CatalogOptions.load(
            from: Data(
                """
                {
                  "codeOffers": { "com.example.kakin.coins": [{ "offerID": "freeCoins", "displayPrice": "0" }] },
                  "offerCodes": {
                    "COINS2026": { "productID": "com.example.kakin.coins", "offerID": "freeCoins" },
                    "SPRING": { "productID": "com.example.kakin.monthly", "offerID": "spring", "maximumRedemptions": 5 }
                  }
                }
                """.utf8))
    }

    static func service() throws -> SandboxService {
        let catalog = try SandboxCatalog(configuration: configuration(), options: options())
        let engine = try ExampleSandbox.engine(
            catalog: catalog, authority: EngineFixture.authority, clock: .manual(at: EngineFixture.start))
        return SandboxService(engine: engine, catalog: catalog)
    }
}

@Suite struct OfferCatalogTests {
    @Test func theCatalogSellsWinBackAndCodeOffers() throws {
        let catalog = try SandboxCatalog(configuration: OfferCatalog.configuration(), options: OfferCatalog.options())
        let monthly = try #require(catalog.engineProduct(id: "com.example.kakin.monthly", storefront: "USA"))
        #expect(monthly.winBackOffers.map(\.identifier) == ["comeBack"])
        #expect(monthly.winBackOffers.first?.priceMilliunits == 990)
        #expect(monthly.winBackOffers.first?.discountType == .payUpFront)
        #expect(monthly.codeOffers.map(\.identifier) == ["spring"])
        let coins = try #require(catalog.engineProduct(id: "com.example.kakin.coins", storefront: "USA"))
        #expect(coins.oneTimeCodeOffers == [.init(identifier: "freeCoins", priceMilliunits: 0)])
        let japan = try #require(catalog.engineProduct(id: "com.example.kakin.monthly", storefront: "JPN"))
        #expect(japan.currency == "JPY")
        #expect(japan.winBackOffers.first?.priceMilliunits ?? 0 > 990, "converted to yen")
        let listed = catalog.localizedProducts(for: ["com.example.kakin.monthly"], storefront: .usa).products
        #expect(listed.first?.subscription?.winBackOffers.map(\.type) == [.winBack])
        #expect(catalog.offerCode("coins2026")?.productID == "com.example.kakin.coins")
        #expect(catalog.offerCode("SPRING")?.maximumRedemptions == 5)
        #expect(catalog.offerCode("nope") == nil)
    }

    @Test func anOfferCodeNamingAMissingOfferIsRefused() throws {
        var options = try OfferCatalog.options()
        options.offerCodes["BAD"] = .init(productID: "com.example.kakin.coins", offerID: "missing")
        #expect(throws: SandboxError(.catalogInvalid)) {
            try SandboxCatalog(configuration: OfferCatalog.configuration(), options: options)
        }
    }
}

@Suite struct StoreKitRouteTests {
    typealias JSON = SandboxServiceTests

    func tester(_ client: some TestClientProtocol, id: String = "t") async throws {
        let created = try await client.execute(
            uri: "/v1/control/testers", method: .post, body: JSON.json(["name": "t@example.com", "id": id]))
        #expect(created.status == .created)
    }

    func error(_ response: TestResponse) -> [String: Any] {
        JSON.object(response.body)["error"] as? [String: Any] ?? [:]
    }

    @Test func simulatedErrorsPerAPI() async throws {
        let service = try OfferCatalog.service()
        try await Application(router: service.router()).test(.router) { client in
            try await tester(client)
            let cases: [(api: String, code: Int, uri: String, method: HTTPRequest.Method)] = [
                ("loadProducts", 7, "/v1/device/products?tester=t&ids=com.example.kakin.coins", .get),
                ("appStoreSync", 0, "/v1/device/testers/t/restore", .post),
                ("appTransaction", 1, "/v1/device/testers/t/app-transaction", .get),
                ("subscriptionStatus", 0, "/v1/device/testers/t/subscriptions/G1/status", .get),
            ]
            for item in cases {
                let set = try await client.execute(
                    uri: "/v1/control/simulated-errors/\(item.api)", method: .put, body: JSON.json(["code": item.code]))
                #expect(set.status == .ok)
                let failed = try await client.execute(uri: item.uri, method: item.method)
                #expect(failed.status == (item.code == 7 ? .serviceUnavailable : .badRequest), "\(item.api)")
                #expect(error(failed)["code"] as? String == "simulatedError")
                #expect(error(failed)["storeKitCode"] as? Int == item.code)
                let cleared = try await client.execute(uri: "/v1/control/simulated-errors/\(item.api)", method: .delete)
                #expect(cleared.status == .noContent)
                #expect(try await client.execute(uri: item.uri, method: item.method).status == .ok, "\(item.api)")
            }
            _ = try await client.execute(
                uri: "/v1/control/simulated-errors/purchase", method: .put, body: JSON.json(["code": 2]))
            _ = try await client.execute(
                uri: "/v1/control/simulated-errors/offerCodeRedeem", method: .put, body: JSON.json(["code": 11]))
            let listed = JSON.object(try await client.execute(uri: "/v1/control/simulated-errors", method: .get).body)
            #expect(listed["errors"] as? [String: Int] == ["purchase": 2, "offerCodeRedeem": 11])
            let paid = JSON.object(
                try await client.execute(
                    uri: "/v1/device/payments", method: .post,
                    body: JSON.json(["testerID": "t", "productID": "com.example.kakin.coins"])
                ).body)
            #expect(paid["state"] as? String == "failed")
            #expect((paid["error"] as? [String: Any])?["userCancelled"] as? Bool == true)
            let redeem = try await client.execute(
                uri: "/v1/device/testers/t/offer-codes/redeem", method: .post, body: JSON.json(["code": "COINS2026"]))
            #expect(redeem.status == .badRequest)
            #expect(error(redeem)["storeKitCode"] as? Int == 11)
            let unknown = try await client.execute(
                uri: "/v1/control/simulated-errors/verification", method: .put, body: JSON.json(["code": 0]))
            #expect(unknown.status == .notFound)
            #expect((error(unknown)["message"] as? String)?.contains("offerCodeRedeem") == true)
        }
    }

    @Test func offerCodesRedeemedThroughTheDeviceAPI() async throws {
        let service = try OfferCatalog.service()
        let verifier = try service.engine.signer.makeVerifier()
        try await Application(router: service.router()).test(.router) { client in
            try await tester(client)
            let coins = JSON.object(
                try await client.execute(
                    uri: "/v1/device/testers/t/offer-codes/redeem", method: .post,
                    body: JSON.json(["code": "coins2026"])
                ).body)
            #expect(coins["state"] as? String == "purchased")
            let jws = try #require((coins["transaction"] as? [String: Any])?["jwsRepresentation"] as? String)
            let signed = try await verifier.verifyTransaction(jws)
            #expect(signed.offerType == .offerCode)
            #expect(signed.offerIdentifier == "freeCoins")
            #expect(signed.offerDiscountType == .oneTime)
            #expect(signed.price == 0)

            let defined = try await client.execute(
                uri: "/v1/control/offer-codes", method: .post,
                body: JSON.json(["code": "vip", "productID": "com.example.kakin.monthly", "offerID": "spring"]))
            #expect(defined.status == .created)
            #expect(JSON.object(defined.body)["code"] as? String == "VIP")
            let list = JSON.object(try await client.execute(uri: "/v1/control/offer-codes", method: .get).body)
            let codes = (list["offerCodes"] as? [[String: Any]])?.compactMap { $0["code"] as? String }
            #expect(codes == ["COINS2026", "VIP"], "the side file's code is kept once redeemed, with who redeemed it")
            let subscribed = JSON.object(
                try await client.execute(
                    uri: "/v1/device/testers/t/offer-codes/redeem", method: .post, body: JSON.json(["code": "VIP"])
                ).body)
            let payload = try #require((subscribed["transaction"] as? [String: Any])?["transaction"] as? [String: Any])
            #expect(payload["offerType"] as? Int == 3)
            #expect(payload["offerIdentifier"] as? String == "spring")
            #expect(await service.engine.events().last?.notificationType == .offerRedeemed)
            let again = JSON.object(
                try await client.execute(
                    uri: "/v1/device/testers/t/offer-codes/redeem", method: .post, body: JSON.json(["code": "VIP"])
                ).body)
            #expect(
                (again["error"] as? [String: Any])?["code"] as? Int == StoreKitErrorCode.ineligibleForOffer.rawValue)
            let missing = try await client.execute(
                uri: "/v1/device/testers/t/offer-codes/redeem", method: .post, body: JSON.json(["code": "NOPE"]))
            #expect(missing.status == .notFound)
            #expect(error(missing)["code"] as? String == "unknownOfferCode")
            #expect(try await client.execute(uri: "/v1/control/offer-codes/VIP", method: .delete).status == .noContent)
        }
    }

    @Test func winBackRefundRequestAndSubscriptionStatusThroughTheDeviceAPI() async throws {
        let service = try OfferCatalog.service()
        try await Application(router: service.router()).test(.router) { client in
            try await tester(client)
            let bought = JSON.object(
                try await client.execute(
                    uri: "/v1/device/payments", method: .post,
                    body: JSON.json(["testerID": "t", "productID": "com.example.kakin.monthly"])
                ).body)
            let payload = try #require((bought["transaction"] as? [String: Any])?["transaction"] as? [String: Any])
            let original = try #require(payload["transactionId"] as? String)
            var status = JSON.object(
                try await client.execute(uri: "/v1/device/testers/t/subscriptions/G1/status", method: .get).body)
            var first = try #require((status["statuses"] as? [[String: Any]])?.first)
            #expect(first["state"] as? Int == 1)
            let signedRenewal = try #require(first["signedRenewalInfo"] as? String)
            await #expect(
                try service.engine.signer.makeVerifier().verifyRenewalInfo(signedRenewal).originalTransactionID
                    == original)

            let refund = try await client.execute(
                uri: "/v1/device/testers/t/transactions/\(original)/refund-request", method: .post)
            #expect(JSON.object(refund.body)["status"] as? String == "success")
            let duplicate = try await client.execute(
                uri: "/v1/device/testers/t/transactions/\(original)/refund-request", method: .post)
            #expect(duplicate.status == .badRequest)
            let declined = try await client.execute(
                uri: "/v1/control/transactions/\(original)/decline-refund", method: .post)
            #expect(JSON.object(declined.body)["state"] as? String == "refundDeclined")
            #expect(await service.engine.events().last?.notificationType == .refundDeclined)

            try await service.engine.setAutoRenew(false, originalTransactionID: original)
            _ = try await client.execute(
                uri: "/v1/control/clock", method: .post, body: JSON.json(["advanceSeconds": 40 * 86_400]))
            status = JSON.object(
                try await client.execute(uri: "/v1/device/testers/t/subscriptions/G1/status", method: .get).body)
            first = try #require((status["statuses"] as? [[String: Any]])?.first)
            #expect(first["state"] as? Int == 2)
            #expect((first["renewalInfo"] as? [String: Any])?["eligibleWinBackOfferIds"] as? [String] == ["comeBack"])
            let won = JSON.object(
                try await client.execute(
                    uri: "/v1/device/payments", method: .post,
                    body: JSON.json([
                        "testerID": "t", "productID": "com.example.kakin.monthly", "winBackOfferID": "comeBack",
                    ])
                ).body)
            let wonPayload = try #require((won["transaction"] as? [String: Any])?["transaction"] as? [String: Any])
            #expect(wonPayload["offerType"] as? Int == 4)
            #expect(wonPayload["price"] as? Int == 990)
        }
    }

    @Test func refundsPriceIncreasesConsentAndTheClockThroughTheControlAPI() async throws {
        let service = try OfferCatalog.service()
        try await Application(router: service.router()).test(.router) { client in
            try await tester(client)
            let coins = try #require(
                try await service.engine.purchase(.init(testerID: "t", productID: "com.example.kakin.coins"))
                    .transaction)
            _ = try await client.execute(
                uri: "/v1/control/transactions/\(coins.id)/refund", method: .post, body: JSON.json([String: Any]()))
            let reversed = try await client.execute(
                uri: "/v1/control/transactions/\(coins.id)/reverse-refund", method: .post)
            #expect(JSON.object(reversed.body)["state"] as? String == "refundReversed")
            #expect(try await service.engine.transaction(coins.id).isRevoked == false)
            let twice = try await client.execute(
                uri: "/v1/control/transactions/\(coins.id)/reverse-refund", method: .post)
            #expect(twice.status == .badRequest)

            let monthly = try #require(
                try await service.engine.purchase(.init(testerID: "t", productID: "com.example.kakin.monthly"))
                    .transaction)
            let increased = try await client.execute(
                uri: "/v1/control/subscriptions/\(monthly.id)/price-increase", method: .post,
                body: JSON.json(["priceMilliunits": 5_990]))
            #expect(JSON.object(increased.body)["priceIncreaseStatus"] as? Int == 0)
            #expect(JSON.object(increased.body)["renewalPrice"] as? Int == 5_990)
            let consented = try await client.execute(
                uri: "/v1/control/subscriptions/\(monthly.id)/price-increase/consent", method: .post)
            #expect(JSON.object(consented.body)["priceIncreaseStatus"] as? Int == 1)
            #expect(await service.engine.events().last?.subtype == .accepted)

            let rescinded = try await client.execute(uri: "/v1/control/testers/t/rescind-consent", method: .post)
            #expect(JSON.object(rescinded.body)["consentRescindedDate"] != nil)
            #expect(await service.engine.events().last?.notificationType == .rescindConsent)

            let backwards = try await client.execute(
                uri: "/v1/control/clock", method: .post, body: JSON.json(["advanceSeconds": -3600]))
            #expect(backwards.status == .badRequest)
            #expect((error(backwards)["message"] as? String)?.contains("forward") == true)
            #expect(service.engine.clock.now() == EngineFixture.start)
        }
    }

    @Test func unknownProductsAndBadQuantitiesAreAnsweredWithAMessage() async throws {
        let service = try OfferCatalog.service()
        try await Application(router: service.router()).test(.router) { client in
            try await tester(client)
            let products = JSON.object(
                try await client.execute(
                    uri: "/v1/device/products?tester=t&ids=com.example.kakin.coins,com.example.kakin.ghost",
                    method: .get
                ).body)
            let invalid = try #require((products["invalidProductIdentifiers"] as? [[String: Any]])?.first)
            #expect(invalid["identifier"] as? String == "com.example.kakin.ghost")
            #expect((invalid["message"] as? String)?.isEmpty == false)
            let ghost = try await client.execute(
                uri: "/v1/device/payments", method: .post,
                body: JSON.json(["testerID": "t", "productID": "com.example.kakin.ghost"]))
            #expect(ghost.status == .notFound)
            #expect(error(ghost)["code"] as? String == "unknownProduct")
            #expect((error(ghost)["message"] as? String)?.contains("com.example.kakin.ghost") == true)
            #expect(error(ghost)["storeKitCode"] as? Int == StoreKitErrorCode.storeProductNotAvailable.rawValue)
            let many = try await client.execute(
                uri: "/v1/device/payments", method: .post,
                body: JSON.json(["testerID": "t", "productID": "com.example.kakin.coins", "quantity": 11]))
            #expect(many.status == .badRequest)
            #expect(error(many)["code"] as? String == "invalidQuantity")
            #expect(error(many)["storeKitCode"] as? Int == StoreKitErrorCode.paymentInvalid.rawValue)
        }
    }
}
