import AppStoreModels
import Foundation
import KakinServer
import KakinLedger
import KakinTestSupport
import KakinWire
import StoreSandbox
import Testing

/// The calls the server owes Apple: consumption information when a customer asks for a refund
/// (once, within the window, with the ledger's facts and the app's refund preference), and the
/// owner's app account token on purchases that arrived without one or moved to another customer.
@Suite struct AppleRequestSenderTests {
    /// The fixture's ledger served by a service whose app holds the sandbox's API key and `policy`.
    func service(
        _ fixture: ServerFixture, access: ServerAPIAccess?, policy: ConsumptionPolicy?,
        transferPolicy: TransferPolicy = .keepWithOriginal, setsTokens: Bool = false
    ) throws -> PurchaseService {
        let clock = fixture.clock
        return PurchaseService.example(
            store: fixture.store, root: ServerFixture.authority.root, grants: try ExampleApp.grants(),
            now: { clock.now() }
        ) { app in
            app.transferPolicy = transferPolicy
            app.serverAPI = access
            app.consumption = policy
            app.setsAppAccountTokens = setsTokens
        }
    }

    /// The customer asks the sandbox for a refund; its CONSUMPTION_REQUEST reaches `service`.
    func requestRefund(_ fixture: ServerFixture, _ transactionID: String, service: PurchaseService) async throws {
        try await fixture.engine.requestRefund(transactionID, testerID: "tester")
        let event = try #require(await fixture.engine.events().last { $0.notificationType == .consumptionRequest })
        let body = try await fixture.engine.signedNotification(for: event)
        #expect(try await service.receiveNotification(body) == .processed(.consumptionRequest))
        #expect(try await service.receiveNotification(body) == .duplicate, "Apple's retry is recorded once")
    }

    @Test func aRefundRequestIsAnsweredOnceWithTheLedgersFacts() async throws {
        let fixture = try await ServerFixture()
        try await fixture.withServerAPI { access in
            let service = try service(
                fixture, access: access, policy: ConsumptionPolicy(customersConsented: true, declineWhenUsed: true))
            let (points, jws) = try await fixture.buy("increasePoints")
            _ = try await service.submitTransaction(jws, bundleID: ServerFixture.bundleID, appUserID: "user-1")
            _ = try await service.spend(
                bundleID: ServerFixture.bundleID, appUserID: "user-1", currency: "points", amount: 30,
                idempotencyKey: "spend-1")
            try await requestRefund(fixture, points.id, service: service)

            let reporter = AppleRequestSender(service: service)
            let report = try await reporter.sendDue()
            #expect(report.sent == 1 && report.failed == 0)
            #expect(try await reporter.sendDue() == .init(), "sent once")

            let sent = try #require(await fixture.engine.snapshot.consumptionReports[points.id])
            #expect(sent.customerConsented == true && sent.deliveryStatus == .delivered)
            #expect(sent.consumptionPercentage == 30_000, "30 of the 100 points credited were spent")
            #expect(sent.refundPreference == .decline)
            let recorded = try await service.appleCalls.appleRequests(bundleID: nil, limit: 10)
                .filter { $0.kind == .consumptionInformation }
            #expect(recorded.map(\.state) == [.sent] && recorded.first?.attempts == 1)

            // The sandbox's App Store follows the developer's preference.
            #expect(try await fixture.engine.decideRefund(points.id) == false)
            #expect(await fixture.engine.events().last?.notificationType == .refundDeclined)
        }
        try await fixture.store.shutdown()
    }

    @Test func withoutConsentNothingIsSent() async throws {
        let fixture = try await ServerFixture()
        try await fixture.withServerAPI { access in
            let service = try service(fixture, access: access, policy: ConsumptionPolicy(customersConsented: false))
            let (points, jws) = try await fixture.buy("increasePoints")
            _ = try await service.submitTransaction(jws, bundleID: ServerFixture.bundleID, appUserID: "user-1")
            try await requestRefund(fixture, points.id, service: service)
            #expect(try await AppleRequestSender(service: service).sendDue() == .init())
            #expect(await fixture.engine.snapshot.consumptionReports[points.id] == nil)
            let recorded = try await service.appleCalls.appleRequests(bundleID: nil, limit: 10)
                .filter { $0.kind == .consumptionInformation }
            #expect(recorded.map(\.state) == [.skipped])
        }
        try await fixture.store.shutdown()
    }

    @Test func appleUnavailableIsRetriedWithBackoffUntilTheWindowCloses() async throws {
        let fixture = try await ServerFixture()
        // An API host that refuses connections: every attempt fails in a way worth retrying.
        let unreachable = ServerAPIAccess(
            baseURL: URL(string: "http://127.0.0.1:9")!, keyID: "KEY", issuerID: "issuer",
            privateKey: .init())
        let service = try service(fixture, access: unreachable, policy: ConsumptionPolicy(customersConsented: true))
        let (points, jws) = try await fixture.buy("increasePoints")
        _ = try await service.submitTransaction(jws, bundleID: ServerFixture.bundleID, appUserID: "user-1")
        try await requestRefund(fixture, points.id, service: service)
        let reporter = AppleRequestSender(service: service)
        #expect(try await reporter.sendDue().retried == 1)
        #expect(try await reporter.sendDue() == .init(), "not due again before its wait")
        fixture.clock.advance(by: 31)
        #expect(try await reporter.sendDue().retried == 1)
        let waiting = try #require(try await service.appleCalls.appleRequests(bundleID: nil, limit: 1).first)
        #expect(waiting.attempts == 2 && waiting.state == .pending)
        #expect(waiting.nextAttemptAt == fixture.clock.now().addingTimeInterval(60), "the wait doubled")
        fixture.clock.advance(by: 13 * 3600)
        #expect(try await reporter.sendDue().failed == 1, "Apple's 12 hours are over")
        try await fixture.store.shutdown()
    }

    @Test func aCallApplesRateLimitRefusesWaitsUntilTheTimeAppleNames() async throws {
        let fixture = try await ServerFixture()
        // No consumption information at all this hour: the sandbox refuses with Apple's 429.
        try await fixture.withServerAPI(
            rateLimits: SandboxRateLimits(requests: [.sendConsumptionInformation: 0], window: .seconds(3600))
        ) { access in
            let service = try service(fixture, access: access, policy: ConsumptionPolicy(customersConsented: true))
            let (points, jws) = try await fixture.buy("increasePoints")
            _ = try await service.submitTransaction(jws, bundleID: ServerFixture.bundleID, appUserID: "user-1")
            try await requestRefund(fixture, points.id, service: service)
            let reporter = AppleRequestSender(service: service)
            #expect(try await reporter.sendDue().retried == 1)
            let now = fixture.clock.now().timeIntervalSince1970
            let windowEnd = Date(timeIntervalSince1970: ((now / 3600).rounded(.down) + 1) * 3600)
            let waiting = try #require(try await service.appleCalls.appleRequests(bundleID: nil, limit: 1).first)
            #expect(waiting.state == .pending && waiting.lastError?.contains("4290000") == true)
            #expect(waiting.nextAttemptAt >= windowEnd, "not before the sandbox takes requests again")
            #expect(waiting.nextAttemptAt <= windowEnd.addingTimeInterval(1))
        }
        try await fixture.store.shutdown()
    }

    @Test func purchasesWithoutATokenOrMovedGetTheOwnersToken() async throws {
        let fixture = try await ServerFixture()
        try await fixture.withServerAPI { access in
            let service = try service(
                fixture, access: access, policy: nil, transferPolicy: .transferToNewUser, setsTokens: true)
            // The sandbox sells without a token, as an app that never set one does.
            let (unlock, jws) = try await fixture.buy("unlock")
            #expect(unlock.appAccountToken == nil)
            _ = try await service.submitTransaction(jws, bundleID: ServerFixture.bundleID, appUserID: "user-1")
            _ = try await service.submitTransaction(jws, bundleID: ServerFixture.bundleID, appUserID: "user-1")
            let sender = AppleRequestSender(service: service)
            #expect(try await sender.sendDue().sent == 1, "one call, however often the purchase is uploaded")
            let linked = try #require(await fixture.engine.snapshot.transactions[unlock.id])
            #expect(linked.appAccountToken == AppAccountToken.derived(from: "user-1").uuidString.lowercased())

            // Restored by another customer on a device of the same Apple Account, the purchase moves,
            // and so does its token.
            _ = try await service.submitTransaction(
                jws, bundleID: ServerFixture.bundleID, appUserID: "user-2",
                signedAppTransaction: try await fixture.engine.signedAppTransaction(for: "tester"))
            #expect(try await sender.sendDue().sent == 1)
            let moved = try #require(await fixture.engine.snapshot.transactions[unlock.id])
            #expect(moved.appAccountToken == AppAccountToken.derived(from: "user-2").uuidString.lowercased())
            #expect(try await sender.sendDue() == .init())
        }
        try await fixture.store.shutdown()
    }
}
