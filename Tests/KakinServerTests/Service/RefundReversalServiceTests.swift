import AppStoreModels
import Foundation
import KakinLedger
import KakinServer
import KakinTestSupport
import StoreSandbox
import Testing

/// REFUND_REVERSED from the sandbox App Store: the server gives back the entitlement and the
/// currency a refund took, once, whatever order the refund and its reversal arrive in.
@Suite struct RefundReversalServiceTests {
    static let user = "user-1"

    /// A customer with 100 points (a consumable) and a monthly subscription, both uploaded.
    static func customerWithPurchases(
        _ fixture: ServerFixture
    ) async throws -> (points: SandboxTransaction, monthly: SandboxTransaction) {
        let (points, pointsJWS) = try await fixture.buy("increasePoints")
        let (monthly, monthlyJWS) = try await fixture.buy("premium.monthly")
        for jws in [pointsJWS, monthlyJWS] {
            _ = try await fixture.service.submitTransaction(jws, bundleID: ServerFixture.bundleID, appUserID: user)
        }
        return (points, monthly)
    }

    /// Refunds each transaction in the sandbox and returns the REFUND notifications, signed then.
    static func refund(_ fixture: ServerFixture, _ ids: [String]) async throws -> [ResponseBodyV2] {
        try await refundEvents(fixture, ids).bodies
    }

    /// ``refund(_:_:)``, with the events the notifications are about.
    static func refundEvents(
        _ fixture: ServerFixture, _ ids: [String]
    ) async throws -> (events: [SandboxEvent], bodies: [ResponseBodyV2]) {
        var events: [SandboxEvent] = []
        var bodies: [ResponseBodyV2] = []
        for id in ids {
            try await fixture.engine.refund(id)
            let event = try #require(await fixture.engine.events().last)
            #expect(event.notificationType == .refund)
            events.append(event)
            bodies.append(try await fixture.engine.signedNotification(for: event))
        }
        return (events, bodies)
    }

    /// Reverses each refund in the sandbox and returns the REFUND_REVERSED notifications, signed
    /// then, with their events.
    static func reverse(
        _ fixture: ServerFixture, _ ids: [String]
    ) async throws -> (events: [SandboxEvent], bodies: [ResponseBodyV2]) {
        var events: [SandboxEvent] = []
        var bodies: [ResponseBodyV2] = []
        for id in ids {
            try await fixture.engine.reverseRefund(id)
            let event = try #require(await fixture.engine.events().last)
            #expect(event.notificationType == .refundReversed)
            events.append(event)
            bodies.append(try await fixture.engine.signedNotification(for: event))
        }
        return (events, bodies)
    }

    static func customer(_ fixture: ServerFixture) async throws -> EntitledCustomer {
        try await fixture.service.customer(bundleID: ServerFixture.bundleID, appUserID: user)
    }

    static func activeEntitlements(_ fixture: ServerFixture) async throws -> [String] {
        try await fixture.service.customer(bundleID: ServerFixture.bundleID, appUserID: user).entitlements
            .filter(\.isActive).map(\.identifier).sorted()
    }

    @Test func aReversedRefundGivesBackTheEntitlementAndThePointsOnce() async throws {
        let fixture = try await ServerFixture()
        let (points, monthly) = try await Self.customerWithPurchases(fixture)
        #expect(try await Self.activeEntitlements(fixture) == ["premium"])
        #expect(try await Self.customer(fixture).balances == ["points": 100])

        fixture.clock.advance(by: 3600)
        let (refundEvents, refunds) = try await Self.refundEvents(fixture, [points.id, monthly.id])
        // The same refunds, as Apple would send them again under new UUIDs.
        var resent: [ResponseBodyV2] = []
        for event in refundEvents { resent.append(try await fixture.engine.signedNotification(for: event)) }
        for body in refunds { #expect(try await fixture.service.receiveNotification(body) == .processed(.refund)) }
        #expect(try await Self.activeEntitlements(fixture).isEmpty)
        #expect(try await Self.customer(fixture).balances == ["points": 0])

        fixture.clock.advance(by: 86_400)
        let (reversalEvents, reversals) = try await Self.reverse(fixture, [points.id, monthly.id])
        for body in reversals {
            #expect(try await fixture.service.receiveNotification(body) == .processed(.refundReversed))
            #expect(try await fixture.service.receiveNotification(body) == .duplicate)
        }
        #expect(try await Self.activeEntitlements(fixture) == ["premium"])
        var customer = try await Self.customer(fixture)
        #expect(customer.balances == ["points": 100])
        #expect(customer.transactions.allSatisfy { $0.revocationDate == nil })

        // The refunds again, and the reversals signed again: nothing more changes.
        for body in resent { #expect(try await fixture.service.receiveNotification(body) == .processed(.refund)) }
        for event in reversalEvents {
            let again = try await fixture.engine.signedNotification(for: event)
            #expect(try await fixture.service.receiveNotification(again) == .processed(.refundReversed))
        }
        #expect(try await Self.activeEntitlements(fixture) == ["premium"])
        customer = try await Self.customer(fixture)
        #expect(customer.balances == ["points": 100])
        #expect(customer.ledger.map(\.amount) == [100, -100, 100])
        #expect(customer.ledger.map(\.kind) == [.credit, .clawback, .credit])
        #expect(customer.transactions.allSatisfy { $0.revocationDate == nil })

        // A refund after the reversal takes back again.
        fixture.clock.advance(by: 86_400)
        for body in try await Self.refund(fixture, [points.id]) {
            #expect(try await fixture.service.receiveNotification(body) == .processed(.refund))
        }
        customer = try await Self.customer(fixture)
        #expect(customer.balances == ["points": 0])
        #expect(customer.ledger.map(\.amount) == [100, -100, 100, -100])
        try await fixture.store.shutdown()
    }

    @Test func aReversalDeliveredBeforeItsRefundLeavesThePurchaseReinstated() async throws {
        let fixture = try await ServerFixture()
        let (points, monthly) = try await Self.customerWithPurchases(fixture)

        fixture.clock.advance(by: 3600)
        let refunds = try await Self.refund(fixture, [points.id, monthly.id])
        fixture.clock.advance(by: 86_400)
        let reversals = try await Self.reverse(fixture, [points.id, monthly.id]).bodies

        // The reversals arrive first, twice; the refunds they reverse arrive late.
        for body in reversals + reversals.reversed() {
            _ = try await fixture.service.receiveNotification(body)
        }
        for body in refunds { #expect(try await fixture.service.receiveNotification(body) == .processed(.refund)) }

        #expect(try await Self.activeEntitlements(fixture) == ["premium"])
        let customer = try await Self.customer(fixture)
        #expect(customer.balances == ["points": 100])
        #expect(customer.ledger.map(\.amount) == [100])
        #expect(customer.transactions.allSatisfy { $0.revocationDate == nil })
        try await fixture.store.shutdown()
    }

    @Test func aReversalSignedBeforeTheRefundDoesNotUndoIt() async throws {
        let fixture = try await ServerFixture()
        let (points, _) = try await Self.customerWithPurchases(fixture)
        fixture.clock.advance(by: 3600)
        let refundedAt = fixture.clock.now()
        for body in try await Self.refund(fixture, [points.id]) {
            _ = try await fixture.service.receiveNotification(body)
        }
        try await fixture.engine.reverseRefund(points.id)
        let event = try #require(await fixture.engine.events().last)
        let early = try await fixture.engine.signedNotification(for: event, signedDate: refundedAt.addingTimeInterval(-1))
        #expect(try await fixture.service.receiveNotification(early) == .processed(.refundReversed))
        let customer = try await Self.customer(fixture)
        #expect(customer.balances == ["points": 0])
        #expect(customer.transactions.first { $0.transactionID == points.id }?.revocationDate != nil)
        try await fixture.store.shutdown()
    }
}
