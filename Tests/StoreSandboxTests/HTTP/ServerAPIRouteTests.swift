import AppStoreModels
import AppStoreSecurity
import Crypto
import Foundation
import Hummingbird
import HummingbirdTesting
import KakinTestSupport
import StoreSandbox
import Testing

@Suite struct ServerAPIRouteTests {
    let key = P256.Signing.PrivateKey()

    func makeService(rateLimits: SandboxRateLimits? = nil) throws -> SandboxService {
        let catalog = try ExampleApp.catalog()
        let engine = try ExampleSandbox.engine(
            catalog: catalog, authority: EngineFixture.authority, clock: .manual(at: EngineFixture.start))
        return SandboxService(
            engine: engine, catalog: catalog,
            configuration: .init(
                apiKeys: [.init(keyID: "KEY1", issuerID: "issuer", publicKey: key.publicKey)], rateLimits: rateLimits))
    }

    @Test func requestsPastAnEndpointsLimitAreRefusedUntilItsWindowEnds() async throws {
        let service = try makeService(
            rateLimits: SandboxRateLimits(requests: [.getTransactionHistory: 2], window: .seconds(60)))
        let tester = try await service.engine.createTester(name: "api@example.com")
        let bought = try #require(
            try await service.engine.purchase(.init(testerID: tester.id, productID: "com.example.kakin.removeAd"))
                .transaction)
        // The window holding the sandbox's clock ends on the next multiple of 60 s since 1970.
        let now = service.engine.clock.now().timeIntervalSince1970
        let windowEnd = Int64((now / 60).rounded(.down) + 1) * 60_000
        try await Application(router: service.router()).test(.router) { client in
            for _ in 0..<2 {
                let allowed = try await client.execute(
                    uri: "/inApps/v2/history/\(bought.id)", method: .get, headers: try token())
                #expect(allowed.status == .ok)
            }
            let refused = try await client.execute(
                uri: "/inApps/v2/history/\(bought.id)", method: .get, headers: try token())
            #expect(refused.status == .tooManyRequests)
            #expect(refused.headers[.retryAfter] == String(windowEnd))
            let body = try JSONDecoder().decode(APIErrorResponse.self, from: Data(buffer: refused.body))
            #expect(body.errorCode == .rateLimitExceeded)
            // Other endpoints count on their own; a new window starts the count again.
            let info = try await client.execute(
                uri: "/inApps/v1/transactions/\(bought.id)", method: .get, headers: try token())
            #expect(info.status == .ok)
            _ = service.engine.clock.set(Date(timeIntervalSince1970: Double(windowEnd) / 1000))
            let again = try await client.execute(
                uri: "/inApps/v2/history/\(bought.id)", method: .get, headers: try token())
            #expect(again.status == .ok)
        }
    }

    @Test func applesSandboxLimitsAreATenthOfProductionOverAnHour() {
        #expect(SandboxRateLimits.apple.window == .seconds(3600))
        #expect(SandboxRateLimits.apple.requests[.getTransactionHistory] == 18_000)
        #expect(SandboxRateLimits.apple.requests[.setAppAccountToken] == 7_200)
        #expect(SandboxRateLimits.apple.requests[.requestTestNotification] == 360)
        #expect(SandboxRateLimits.apple.requests[.getStatusOfRenewalDateExtensions] == nil)
        #expect(ServerAPIEndpoint.getNotificationHistory.requestsPerHour(in: .production) == 180_000)
    }

    func token(bundle: String = ExampleApp.bundleID, key: P256.Signing.PrivateKey? = nil) throws -> HTTPFields {
        let jwt = try AppStoreServerAPIToken.make(
            keyID: "KEY1", issuerID: "issuer", bundleID: bundle, privateKey: key ?? self.key)
        return [.authorization: "Bearer \(jwt)"]
    }

    @Test func historyStatusesAndTransactionInfoWithABearerToken() async throws {
        let service = try makeService()
        let tester = try await service.engine.createTester(name: "api@example.com")
        let bought = try #require(
            try await service.engine.purchase(
                .init(testerID: tester.id, productID: "com.example.kakin.premium.monthly")
            )
            .transaction)
        let verifier = try service.engine.signer.makeVerifier()
        let decoder = JSONDecoder()
        try await Application(router: service.router()).test(.router) { client in
            let info = try await client.execute(
                uri: "/inApps/v1/transactions/\(bought.id)", method: .get, headers: try token())
            #expect(info.status == .ok)
            let body = try decoder.decode(TransactionInfoResponse.self, from: Data(buffer: info.body))
            await #expect(try verifier.verifyTransaction(try #require(body.signedTransactionInfo)).transactionID == bought.id)

            let history = try await client.execute(
                uri: "/inApps/v2/history/\(bought.id)?productType=AUTO_RENEWABLE&sort=DESCENDING", method: .get,
                headers: try token())
            let page = try decoder.decode(HistoryResponse.self, from: Data(buffer: history.body))
            #expect(page.signedTransactions?.count == 1)
            #expect(page.appAppleID == ExampleApp.appAppleID)

            let statuses = try await client.execute(
                uri: "/inApps/v1/subscriptions/\(bought.id)?status=1", method: .get, headers: try token())
            let status = try decoder.decode(StatusResponse.self, from: Data(buffer: statuses.body))
            #expect(status.data?.first?.lastTransactions?.first?.status == .active)

            let app = try await client.execute(
                uri: "/inApps/v1/transactions/appTransactions/\(bought.id)", method: .get, headers: try token())
            let appBody = try decoder.decode(AppTransactionInfoResponse.self, from: Data(buffer: app.body))
            await #expect(
                try verifier.verifyAppTransaction(try #require(appBody.signedAppTransactionInfo)).bundleID
                    == ExampleApp.bundleID)

            let refunds = try await client.execute(
                uri: "/inApps/v2/refund/lookup/\(bought.id)", method: .get, headers: try token())
            #expect(
                try decoder.decode(RefundHistoryResponse.self, from: Data(buffer: refunds.body)).signedTransactions
                    == [])
        }
    }

    @Test func applesErrorBodiesAndCodes() async throws {
        let service = try makeService()
        let tester = try await service.engine.createTester(name: "api@example.com")
        let bought = try #require(
            try await service.engine.purchase(.init(testerID: tester.id, productID: "com.example.kakin.removeAd"))
                .transaction)
        let decoder = JSONDecoder()
        try await Application(router: service.router()).test(.router) { client in
            let noToken = try await client.execute(uri: "/inApps/v1/transactions/\(bought.id)", method: .get)
            #expect(noToken.status == .unauthorized)
            #expect(noToken.body.readableBytes == 0)
            let wrongKey = try await client.execute(
                uri: "/inApps/v1/transactions/\(bought.id)", method: .get,
                headers: try token(key: P256.Signing.PrivateKey()))
            #expect(wrongKey.status == .unauthorized)

            let notFound = try await client.execute(
                uri: "/inApps/v1/transactions/999999", method: .get, headers: try token())
            #expect(notFound.status == .notFound)
            let error = try decoder.decode(APIErrorResponse.self, from: Data(buffer: notFound.body))
            #expect(error.errorCode == .transactionIDNotFound)
            #expect(error.errorMessage == "Transaction id not found.")

            let invalid = try await client.execute(
                uri: "/inApps/v1/transactions/abc", method: .get, headers: try token())
            #expect(
                try decoder.decode(APIErrorResponse.self, from: Data(buffer: invalid.body)).errorCode
                    == .invalidTransactionID)
            #expect(invalid.status == .badRequest)

            let revision = try await client.execute(
                uri: "/inApps/v2/history/\(bought.id)?revision=bogus", method: .get, headers: try token())
            #expect(
                try decoder.decode(APIErrorResponse.self, from: Data(buffer: revision.body)).errorCode
                    == .invalidRequestRevision)

            let badDate = try await client.execute(
                uri: "/inApps/v2/history/\(bought.id)?startDate=yesterday", method: .get, headers: try token())
            #expect(
                try decoder.decode(APIErrorResponse.self, from: Data(buffer: badDate.body)).errorCode
                    == .invalidStartDate)

            let otherApp = try await client.execute(
                uri: "/inApps/v1/transactions/\(bought.id)", method: .get, headers: try token(bundle: "com.other"))
            #expect(
                try decoder.decode(APIErrorResponse.self, from: Data(buffer: otherApp.body)).errorCode
                    == .invalidAppIdentifier)

            let badStatus = try await client.execute(
                uri: "/inApps/v1/subscriptions/\(bought.id)?status=9", method: .get, headers: try token())
            #expect(
                try decoder.decode(APIErrorResponse.self, from: Data(buffer: badStatus.body)).errorCode
                    == .invalidStatus)
        }
    }
}

extension ServerAPIRouteTests {
    @Test func testNotificationAndNotificationHistory() async throws {
        let service = try makeService()
        let tester = try await service.engine.createTester(name: "api@example.com")
        let bought = try #require(
            try await service.engine.purchase(.init(testerID: tester.id, productID: "com.example.kakin.removeAd"))
                .transaction)
        let verifier = try service.engine.signer.makeVerifier()
        let decoder = JSONDecoder()
        try await Application(router: service.router()).test(.router) { client in
            let requested = try await client.execute(
                uri: "/inApps/v1/notifications/test", method: .post, headers: try token())
            let testToken = try #require(
                try decoder.decode(SendTestNotificationResponse.self, from: Data(buffer: requested.body))
                    .testNotificationToken)
            try await service.engine.deliverDueNotifications(
                to: URL(string: "http://x/")!, using: ScriptedTransport([]))

            let status = try await client.execute(
                uri: "/inApps/v1/notifications/test/\(testToken)", method: .get, headers: try token())
            let check = try decoder.decode(CheckTestNotificationResponse.self, from: Data(buffer: status.body))
            #expect(check.sendAttempts?.first?.sendAttemptResult == .success)
            await #expect(try verifier.verifyNotification(try #require(check.signedPayload)).notificationType == .test)
            let missing = try await client.execute(
                uri: "/inApps/v1/notifications/test/nope", method: .get, headers: try token())
            #expect(
                try decoder.decode(APIErrorResponse.self, from: Data(buffer: missing.body)).errorCode
                    == .testNotificationNotFound)

            let start = EngineFixture.start.addingTimeInterval(-60).epochMilliseconds
            let end = EngineFixture.start.addingTimeInterval(60).epochMilliseconds
            let history = try await client.execute(
                uri: "/inApps/v1/notifications/history", method: .post, headers: try token(),
                body: ByteBuffer(string: #"{"startDate":\#(start),"endDate":\#(end),"transactionId":"\#(bought.id)"}"#))
            let page = try decoder.decode(NotificationHistoryResponse.self, from: Data(buffer: history.body))
            #expect(page.notificationHistory?.count == 1)
            let item = try #require(page.notificationHistory?.first?.signedPayload)
            await #expect(try verifier.verifyNotification(item).notificationType == .oneTimeCharge)

            let both = try await client.execute(
                uri: "/inApps/v1/notifications/history", method: .post, headers: try token(),
                body: ByteBuffer(
                    string: #"{"startDate":\#(start),"endDate":\#(end),"transactionId":"1","notificationType":"TEST"}"#)
            )
            #expect(
                try decoder.decode(APIErrorResponse.self, from: Data(buffer: both.body)).errorCode
                    == .multipleFiltersSupplied)
        }
    }
}

extension ServerAPIRouteTests {
    @Test func renewalDateExtensionsConsumptionAndOrderLookup() async throws {
        let service = try makeService()
        let tester = try await service.engine.createTester(name: "x@example.com")
        let monthly = try #require(
            try await service.engine.purchase(
                .init(testerID: tester.id, productID: "com.example.kakin.premium.monthly")
            )
            .transaction)
        let points = try #require(
            try await service.engine.purchase(.init(testerID: tester.id, productID: "com.example.kakin.increasePoints"))
                .transaction)
        let decoder = JSONDecoder()
        @Sendable func code(_ response: TestResponse) throws -> APIErrorCode? {
            try JSONDecoder().decode(APIErrorResponse.self, from: Data(buffer: response.body)).errorCode
        }
        try await Application(router: service.router()).test(.router) { client in
            let extend = #"{"extendByDays":10,"extendReasonCode":1,"requestIdentifier":"r1"}"#
            let extended = try await client.execute(
                uri: "/inApps/v1/subscriptions/extend/\(monthly.id)", method: .put, headers: try token(),
                body: ByteBuffer(string: extend))
            let response = try decoder.decode(ExtendRenewalDateResponse.self, from: Data(buffer: extended.body))
            #expect(response.success == true)
            #expect(response.effectiveDate == monthly.expiresDate?.addingTimeInterval(10 * 86_400))
            _ = try await client.execute(
                uri: "/inApps/v1/subscriptions/extend/\(monthly.id)", method: .put, headers: try token(),
                body: ByteBuffer(string: extend))
            let third = try await client.execute(
                uri: "/inApps/v1/subscriptions/extend/\(monthly.id)", method: .put, headers: try token(),
                body: ByteBuffer(string: extend))
            #expect(try code(third) == .subscriptionMaxExtension)
            let tooLong = try await client.execute(
                uri: "/inApps/v1/subscriptions/extend/\(monthly.id)", method: .put, headers: try token(),
                body: ByteBuffer(string: #"{"extendByDays":91,"extendReasonCode":1,"requestIdentifier":"r"}"#))
            #expect(try code(tooLong) == .invalidExtendByDays)
            #expect(await service.engine.events().last?.notificationType == .renewalExtended)

            let mass = try await client.execute(
                uri: "/inApps/v1/subscriptions/extend/mass", method: .post, headers: try token(),
                body: ByteBuffer(
                    string:
                        #"{"extendByDays":5,"extendReasonCode":0,"requestIdentifier":"m1","productId":"com.example.kakin.premium.monthly","storefrontCountryCodes":[]}"#
                ))
            #expect(mass.status == .ok)
            let status = try await client.execute(
                uri: "/inApps/v1/subscriptions/extend/mass/com.example.kakin.premium.monthly/m1", method: .get,
                headers: try token())
            let massStatus = try decoder.decode(
                MassExtendRenewalDateStatusResponse.self, from: Data(buffer: status.body))
            #expect(massStatus.complete == true)
            #expect(massStatus.failedCount == 1, "the subscription already had two extensions this year")

            let consumption = try await client.execute(
                uri: "/inApps/v2/transactions/consumption/\(points.id)", method: .put, headers: try token(),
                body: ByteBuffer(
                    string: #"{"customerConsented":true,"sampleContentProvided":false,"deliveryStatus":"DELIVERED"}"#))
            #expect(consumption.status == .ok)
            let refused = try await client.execute(
                uri: "/inApps/v2/transactions/consumption/\(points.id)", method: .put, headers: try token(),
                body: ByteBuffer(string: #"{"customerConsented":false,"sampleContentProvided":false}"#))
            #expect(try code(refused) == .invalidCustomerConsented)

            let order = try #require(points.orderID)
            let lookup = try await client.execute(uri: "/inApps/v1/lookup/\(order)", method: .get, headers: try token())
            let found = try decoder.decode(OrderLookupResponse.self, from: Data(buffer: lookup.body))
            #expect(found.status == .valid)
            #expect(found.signedTransactions?.count == 1)
            let missing = try await client.execute(uri: "/inApps/v1/lookup/NOPE", method: .get, headers: try token())
            #expect(try decoder.decode(OrderLookupResponse.self, from: Data(buffer: missing.body)).status == .invalid)
        }
    }
}

extension ServerAPIRouteTests {
    @Test func appAccountTokenAndServerSideFinish() async throws {
        let service = try makeService()
        let tester = try await service.engine.createTester(name: "t@example.com")
        let points = try #require(
            try await service.engine.purchase(.init(testerID: tester.id, productID: "com.example.kakin.increasePoints"))
                .transaction)
        let token = UUID()
        try await Application(router: service.router()).test(.router) { client in
            let set = try await client.execute(
                uri: "/inApps/v1/transactions/\(points.id)/appAccountToken", method: .put, headers: try self.token(),
                body: ByteBuffer(string: #"{"appAccountToken":"\#(token.uuidString)"}"#))
            #expect(set.status == .ok)
            let bad = try await client.execute(
                uri: "/inApps/v1/transactions/\(points.id)/appAccountToken", method: .put, headers: try self.token(),
                body: ByteBuffer(string: #"{"appAccountToken":"not-a-uuid"}"#))
            #expect(
                try JSONDecoder().decode(APIErrorResponse.self, from: Data(buffer: bad.body)).errorCode
                    == .invalidAppAccountTokenUUID)
            let finished = try await client.execute(
                uri: "/inApps/v1/transactions/\(points.id)/finish", method: .post, headers: try self.token())
            #expect(finished.status == .ok)
        }
        let updated = try await service.engine.transaction(points.id)
        #expect(updated.appAccountToken == token.uuidString.lowercased())
        #expect(updated.isFinished)
    }
}

extension ServerAPIRouteTests {
    @Test func aFamilySharedPurchaseIsItsMembersAndRefusesAnAccountToken() async throws {
        let service = try makeService()
        let buyer = try await service.engine.createTester(name: "parent@example.com")
        let child = try await service.engine.createTester(name: "child@example.com")
        let pass = try #require(
            try await service.engine.purchase(.init(testerID: buyer.id, productID: "com.example.kakin.removeAd"))
                .transaction)
        let shared = try await service.engine.shareWithFamily(pass.id, member: child.id)
        #expect(shared.testerID == child.id && shared.originalID == shared.id && shared.id != pass.id)
        let payload = shared.payload(bundleID: ExampleApp.bundleID, signedDate: EngineFixture.start)
        #expect(payload.inAppOwnershipType == .familyShared)
        #expect(await service.engine.events().last?.notificationType == .oneTimeCharge)
        await #expect(throws: SandboxError.self, "a consumable has no Family Sharing") {
            let points = try #require(
                try await service.engine.purchase(.init(testerID: buyer.id, productID: "com.example.kakin.increasePoints"))
                    .transaction)
            try await service.engine.shareWithFamily(points.id, member: child.id)
        }

        let token = UUID()
        try await Application(router: service.router()).test(.router) { client in
            let refused = try await client.execute(
                uri: "/inApps/v1/transactions/\(shared.id)/appAccountToken", method: .put, headers: try self.token(),
                body: ByteBuffer(string: #"{"appAccountToken":"\#(token.uuidString)"}"#))
            #expect(refused.status == .badRequest)
            #expect(
                try JSONDecoder().decode(APIErrorResponse.self, from: Data(buffer: refused.body)).errorCode
                    == .familyTransactionNotSupported)
            let set = try await client.execute(
                uri: "/inApps/v1/transactions/\(pass.id)/appAccountToken", method: .put, headers: try self.token(),
                body: ByteBuffer(string: #"{"appAccountToken":"\#(token.uuidString)"}"#))
            #expect(set.status == .ok, "the buyer's own purchase takes a token")
        }
    }
}
