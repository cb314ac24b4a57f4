import AppStoreModels
import AppStoreTesting
import Foundation
import KakinTestSupport
import KakinWire
import StoreSandbox
import Testing

@testable import KakinServer
@testable import KakinLedger

/// The server's notification path keeps each subscription's renewal state: verified renewal info,
/// notifications delivered out of order or again, and access (hosted content included) through a
/// grace period.
@Suite struct SubscriptionNotificationServiceTests {
    static let monthly = "com.example.kakin.premium.monthly"
    static let day: TimeInterval = 86_400

    func receive(
        _ record: NotificationRecord, _ fixture: ServerFixture
    ) async throws -> PurchaseService.NotificationOutcome {
        try await fixture.service.receiveNotification(ResponseBodyV2(signedPayload: record.signedPayload))
    }

    func premium(_ fixture: ServerFixture) async throws -> Entitlement {
        let (_, entitlements) = try await fixture.service.customerSummary(
            bundleID: ServerFixture.bundleID, appUserID: "ann", recent: 0, withJWS: false)
        return try #require(entitlements.first { $0.identifier == "premium" })
    }

    @Test func notificationsOutOfOrderOrAgainKeepTheLatestState() async throws {
        let fixture = try await ServerFixture()
        let (bought, jws) = try await fixture.buy("premium.monthly")
        try await fixture.service.submit(jws, bundleID: ServerFixture.bundleID, appUserID: "ann")
        for record in try await fixture.engine.queueNotifications() {
            #expect(try await receive(record, fixture) == .processed(.subscribed))
        }
        #expect(try await premium(fixture).periodType == .trial)

        // Off, then on again, delivered the other way round: the later state stays.
        fixture.clock.advance(by: 3_600)
        try await fixture.engine.setAutoRenew(false, originalTransactionID: bought.originalID)
        fixture.clock.advance(by: 3_600)
        try await fixture.engine.setAutoRenew(true, originalTransactionID: bought.originalID)
        let changes = try await fixture.engine.queueNotifications()
        #expect(changes.map(\.subtype) == [.autoRenewDisabled, .autoRenewEnabled])
        #expect(try await receive(changes[1], fixture) == .processed(.didChangeRenewalStatus))
        #expect(try await receive(changes[0], fixture) == .processed(.didChangeRenewalStatus))
        let stored = try await fixture.store.subscriptionRenewals(
            bundleID: ServerFixture.bundleID, originalTransactionIDs: [bought.originalID])[bought.originalID]
        #expect(stored?.autoRenewStatus == .on && stored?.notificationUUID == changes[1].notificationUUID)
        #expect(try await premium(fixture).willRenew == true)

        // A failed renewal: in its grace period the subscription and its product still give access.
        try await fixture.engine.failRenewals(originalTransactionID: bought.originalID)
        fixture.clock.advance(by: 8 * Self.day)
        try await fixture.engine.processRenewals()
        let failure = try #require(try await fixture.engine.queueNotifications().first)
        #expect(try await receive(failure, fixture) == .processed(.didFailToRenew))
        var entitlement = try await premium(fixture)
        #expect(entitlement.isActive && entitlement.billingIssueDetectedAt == failure.signedDate)
        let (summary, _) = try await fixture.service.customerSummary(
            bundleID: ServerFixture.bundleID, appUserID: "ann", recent: 0, withJWS: false)
        let app = try fixture.service.app(ServerFixture.bundleID)
        #expect(try await fixture.service.hasAccess(to: Self.monthly, in: summary, app: app))

        // The grace period ends; the failure delivered again afterwards changes nothing.
        fixture.clock.advance(by: 20 * Self.day)
        try await fixture.engine.processRenewals()
        for record in try await fixture.engine.queueNotifications() {
            #expect(try await receive(record, fixture) == .processed(.gracePeriodExpired))
        }
        #expect(try await receive(failure, fixture) == .duplicate)
        entitlement = try await premium(fixture)
        #expect(!entitlement.isActive && entitlement.billingIssueDetectedAt == failure.signedDate)
        #expect(!(try await fixture.service.hasAccess(to: Self.monthly, in: summary, app: app)))
        // The full customer (the dashboard's view) agrees.
        let customer = try await fixture.service.customer(bundleID: ServerFixture.bundleID, appUserID: "ann")
        #expect(customer.entitlements.first { $0.identifier == "premium" } == entitlement)
    }

    @Test func forgedRenewalInfoIsRefusedAndNothingIsKept() async throws {
        let fixture = try await ServerFixture()
        let (bought, jws) = try await fixture.buy("premium.monthly")
        try await fixture.service.submit(jws, bundleID: ServerFixture.bundleID, appUserID: "ann")
        let event = try #require(try await fixture.engine.takeEvents().first)
        var payload = try await fixture.engine.notificationPayload(for: event)
        // Renewal info signed by a key Apple's chain does not vouch for.
        let stranger = SandboxSigner(
            authority: try SandboxCertificateAuthority.generate(now: ServerFixture.start),
            bundleID: ServerFixture.bundleID, appAppleID: ExampleApp.appAppleID)
        payload.data?.signedRenewalInfo = try stranger.signRenewalInfo(
            JWSRenewalInfoDecodedPayload(originalTransactionID: bought.originalID, autoRenewStatus: .off),
            at: fixture.clock.now())
        let body = ResponseBodyV2(
            signedPayload: try fixture.engine.signer.signNotification(payload, at: fixture.clock.now()))
        await #expect(throws: ServerError.self) { try await fixture.service.receiveNotification(body) }
        #expect(
            try await fixture.store.subscriptionRenewals(
                bundleID: ServerFixture.bundleID, originalTransactionIDs: [bought.originalID]
            ).isEmpty)
    }
}
