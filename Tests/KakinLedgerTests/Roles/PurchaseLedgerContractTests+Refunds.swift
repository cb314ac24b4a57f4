import AppStoreModels
import Foundation
import KakinTestSupport
import Testing

@testable import KakinLedger

/// Refunds, whole and prorated, and their reversals: what a revocation takes back, once per
/// share, and what a reversal gives back, in the order of Apple's dates.
extension PurchaseLedgerContractTests {
    private func revoke(
        _ ledger: any PurchaseRoles, _ id: String = "t1", share: Int = RecordedTransaction.wholeShare,
        at seconds: TimeInterval = 200, policy: ClawbackPolicy = .clampAtZero
    ) async throws -> Bool {
        try await ledger.revoke(
            transactionID: id, at: Fixture.at(seconds), reason: 0, share: share, grants: Fixture.coins, policy: policy)
    }

    private func reinstate(
        _ ledger: any PurchaseRoles, _ id: String = "t1", at seconds: TimeInterval
    ) async throws -> Bool {
        try await ledger.reinstate(transactionID: id, reversedAt: Fixture.at(seconds), grants: Fixture.coins)
    }

    private func alice(_ ledger: any PurchaseRoles) async throws -> CustomerState {
        try await ledger.customer(bundleID: Fixture.bundleID, appUserID: "alice")
    }

    private func clawbacks(_ ledger: any PurchaseRoles) async throws -> [LedgerEntry] {
        try await alice(ledger).ledger.filter { $0.kind == .clawback }
    }

    /// Alice buys 100 coins (`t1`) and spends `amount` of them.
    private func buyThenSpend(_ ledger: any PurchaseRoles, _ amount: Int64) async throws {
        _ = try await ledger.record(Fixture.transaction("t1", user: "alice"), grants: Fixture.coins)
        #expect(
            try await ledger.spend(
                bundleID: Fixture.bundleID, appUserID: "alice", currency: "coins", amount: amount, idempotencyKey: "s1",
                at: Fixture.at(100)) == .spent(balance: 100 - amount))
    }

    /// The key of a reversal at `seconds` after the fixture's epoch.
    private func ms(_ seconds: TimeInterval) -> Int64 { LedgerTime.milliseconds(Fixture.at(seconds)) }

    // MARK: Prorated refunds

    @Test(
        "a 50 % refund takes back 50 of 100 points once; a full refund then takes the other 50",
        arguments: RoleImplementation.all)
    func halfThenFull(_ implementation: RoleImplementation) async throws {
        try await implementation.withPurchases { ledger in
            _ = try await ledger.record(Fixture.transaction("t1", user: "alice"), grants: Fixture.coins)
            #expect(try await revoke(ledger, share: 50_000))
            var customer = try await alice(ledger)
            #expect(customer.balances == ["coins": 50])
            #expect(customer.transactions.first?.revocationDate == Fixture.at(200))
            var lines = try await clawbacks(ledger)
            #expect(lines.map(\.amount) == [-50])
            #expect(lines.map(\.idempotencyKey) == ["clawback:t1:coins:50000"])

            // The same refund delivered again, or a smaller share, takes nothing more.
            #expect(try await revoke(ledger, share: 50_000, at: 210) == false)
            #expect(try await revoke(ledger, share: 25_000, at: 220) == false)
            #expect(try await clawbacks(ledger).count == 1)
            #expect(try await alice(ledger).balances == ["coins": 50])

            // The whole refund takes back only the rest, and then nothing can be revoked again.
            #expect(try await revoke(ledger, at: 300))
            customer = try await alice(ledger)
            #expect(customer.balances == ["coins": 0])
            #expect(customer.transactions.first?.revocationDate == Fixture.at(300))
            lines = try await clawbacks(ledger)
            #expect(lines.map(\.amount) == [-50, -50])
            #expect(lines.map(\.idempotencyKey) == ["clawback:t1:coins:50000", "clawback:t1:coins"])
            #expect(try await revoke(ledger, at: 310) == false)
            #expect(
                try await ledger.revoke(
                    transactionID: "t1", at: Fixture.at(320), reason: 0, grants: Fixture.coins, policy: .clampAtZero)
                    == false)
            try await expectLedgerMatchesBalances(ledger, user: "alice")
        }
    }

    @Test("a share rounds down to whole units, and later refunds make up the rest", arguments: RoleImplementation.all)
    func roundingDown(_ implementation: RoleImplementation) async throws {
        try await implementation.withPurchases { ledger in
            _ = try await ledger.record(Fixture.transaction("t1", user: "alice"), grants: Fixture.coins)
            #expect(try await revoke(ledger, share: 33_333))
            #expect(try await clawbacks(ledger).map(\.amount) == [-33])
            #expect(try await revoke(ledger, share: 66_667, at: 250))
            #expect(try await clawbacks(ledger).map(\.amount) == [-33, -33])
            #expect(try await revoke(ledger, at: 300))
            #expect(try await clawbacks(ledger).map(\.amount) == [-33, -33, -34])
            try await expectLedgerMatchesBalances(ledger, user: "alice")
        }
    }

    @Test("a shortfall is not asked for again by a larger refund", arguments: RoleImplementation.all)
    func shortfallCounts(_ implementation: RoleImplementation) async throws {
        try await implementation.withPurchases { ledger in
            try await buyThenSpend(ledger, 80)
            #expect(try await revoke(ledger, share: 50_000))
            var lines = try await clawbacks(ledger)
            #expect(lines.map(\.amount) == [-20])
            #expect(lines.map(\.shortfall) == [30])
            #expect(try await revoke(ledger, at: 300))
            lines = try await clawbacks(ledger)
            #expect(lines.map(\.amount) == [-20, 0])
            #expect(lines.map(\.shortfall) == [30, 50])
            try await expectLedgerMatchesBalances(ledger, user: "alice")
        }
    }

    @Test("a refund under allowNegative takes back what was spent too", arguments: RoleImplementation.all)
    func allowNegative(_ implementation: RoleImplementation) async throws {
        try await implementation.withPurchases { ledger in
            try await buyThenSpend(ledger, 80)
            #expect(try await revoke(ledger, share: 50_000, policy: .allowNegative))
            #expect(try await revoke(ledger, policy: .allowNegative))
            let customer = try await alice(ledger)
            #expect(customer.balances == ["coins": -80])
            #expect(customer.ledger.map(\.amount) == [100, -80, -50, -50])
            #expect(customer.ledger.map(\.shortfall) == [0, 0, 0, 0])
        }
    }

    @Test(
        "a share outside 1…100000 is refused", arguments: RoleImplementation.all, [0, -1, 100_001])
    func invalidShare(_ implementation: RoleImplementation, share: Int) async throws {
        try await implementation.withPurchases { ledger in
            _ = try await ledger.record(Fixture.transaction("t1", user: "alice"), grants: Fixture.coins)
            await #expect(throws: LedgerStoreError(.invalidArgument)) { try await revoke(ledger, share: share) }
            #expect(try await alice(ledger).balances == ["coins": 100])
        }
    }

    // MARK: Reversed refunds

    @Test(
        "a reversal clears the revocation and gives back what the refund took (not its shortfall), once",
        arguments: RoleImplementation.all)
    func reversalGivesBackWhatWasTaken(_ implementation: RoleImplementation) async throws {
        try await implementation.withPurchases { ledger in
            try await buyThenSpend(ledger, 30)
            #expect(try await revoke(ledger, at: 200))
            #expect(try await alice(ledger).balances == ["coins": 0])

            #expect(try await reinstate(ledger, at: 300))
            let customer = try await alice(ledger)
            #expect(customer.balances == ["coins": 70])
            let transaction = try #require(customer.transactions.first)
            #expect(transaction.revocationDate == nil)
            #expect(transaction.revocationReason == nil)
            #expect(customer.ledger.map(\.kind) == [.credit, .spend, .clawback, .credit])
            #expect(customer.ledger.map(\.amount) == [100, -30, -70, 70])
            #expect(customer.ledger.map(\.shortfall) == [0, 0, 30, 0])
            #expect(customer.ledger.last?.idempotencyKey == "reinstate:t1:coins:\(ms(300))")

            // The same reversal again, or an older one, or one of a transaction no longer revoked: nothing.
            #expect(try await reinstate(ledger, at: 300) == false)
            #expect(try await reinstate(ledger, at: 250) == false)
            #expect(try await reinstate(ledger, at: 400) == false)
            #expect(try await reinstate(ledger, "unknown", at: 400) == false)
            #expect(try await alice(ledger).balances == ["coins": 70])
            #expect(try await alice(ledger).ledger.count == 4)
            try await expectLedgerMatchesBalances(ledger, user: "alice")
        }
    }

    @Test(
        "refunded, reversed, refunded again and reversed again: each step takes or gives once, in the order of Apple's dates",
        arguments: RoleImplementation.all)
    func refundReversedTwice(_ implementation: RoleImplementation) async throws {
        try await implementation.withPurchases { ledger in
            _ = try await ledger.record(Fixture.transaction("t1", user: "alice"), grants: Fixture.coins)
            #expect(try await revoke(ledger, at: 200))
            // A reversal signed before the revocation does not reverse it.
            #expect(try await reinstate(ledger, at: 150) == false)
            #expect(try await alice(ledger).transactions.first?.revocationDate == Fixture.at(200))
            #expect(try await reinstate(ledger, at: 300))
            #expect(try await alice(ledger).balances == ["coins": 100])

            // The reversed refund delivered again, late, or a smaller share of it: not applied again.
            #expect(try await revoke(ledger, at: 200) == false)
            #expect(try await revoke(ledger, share: 50_000, at: 250) == false)
            #expect(try await alice(ledger).transactions.first?.revocationDate == nil)
            #expect(try await alice(ledger).balances == ["coins": 100])

            // A refund after the reversal revokes and takes back again, under keys of its own.
            #expect(try await revoke(ledger, at: 400))
            #expect(try await alice(ledger).balances == ["coins": 0])
            #expect(try await alice(ledger).transactions.first?.revocationDate == Fixture.at(400))
            #expect(try await reinstate(ledger, at: 350) == false)
            #expect(try await reinstate(ledger, at: 500))
            #expect(try await reinstate(ledger, at: 500) == false)
            let customer = try await alice(ledger)
            #expect(customer.balances == ["coins": 100])
            #expect(customer.transactions.first?.revocationDate == nil)
            #expect(customer.ledger.map(\.amount) == [100, -100, 100, -100, 100])
            #expect(
                customer.ledger.map(\.idempotencyKey) == [
                    "grant:t1:coins", "clawback:t1:coins", "reinstate:t1:coins:\(ms(300))",
                    "clawback:t1:coins:reversed:\(ms(300))", "reinstate:t1:coins:\(ms(500))",
                ])
            try await expectLedgerMatchesBalances(ledger, user: "alice")
        }
    }

    @Test(
        "a reversal that arrives before the refund it reverses keeps the late refund from revoking",
        arguments: RoleImplementation.all)
    func reversalBeforeItsRefund(_ implementation: RoleImplementation) async throws {
        try await implementation.withPurchases { ledger in
            _ = try await ledger.record(Fixture.transaction("t1", user: "alice"), grants: Fixture.coins)
            #expect(try await reinstate(ledger, at: 300) == false)
            #expect(try await revoke(ledger, at: 200) == false)
            var customer = try await alice(ledger)
            #expect(customer.transactions.first?.revocationDate == nil)
            #expect(customer.balances == ["coins": 100])
            #expect(customer.ledger.map(\.amount) == [100])
            // A later refund still revokes.
            #expect(try await revoke(ledger, at: 400))
            customer = try await alice(ledger)
            #expect(customer.balances == ["coins": 0])
            #expect(
                customer.ledger.map(\.idempotencyKey) == ["grant:t1:coins", "clawback:t1:coins:reversed:\(ms(300))"])
        }
    }

    @Test(
        "after a reversed partial refund, partial refunds take back their shares again",
        arguments: RoleImplementation.all)
    func partialRefundsAfterAReversal(_ implementation: RoleImplementation) async throws {
        try await implementation.withPurchases { ledger in
            _ = try await ledger.record(Fixture.transaction("t1", user: "alice"), grants: Fixture.coins)
            #expect(try await revoke(ledger, share: 50_000, at: 200))
            #expect(try await reinstate(ledger, at: 300))
            #expect(try await alice(ledger).balances == ["coins": 100])
            #expect(try await revoke(ledger, share: 50_000, at: 400))
            #expect(try await alice(ledger).balances == ["coins": 50])
            #expect(try await revoke(ledger, at: 500))
            let customer = try await alice(ledger)
            #expect(customer.balances == ["coins": 0])
            #expect(customer.ledger.map(\.amount) == [100, -50, 50, -50, -50])
            #expect(
                customer.ledger.map(\.idempotencyKey).suffix(2) == [
                    "clawback:t1:coins:50000:reversed:\(ms(300))", "clawback:t1:coins:reversed:\(ms(300))",
                ])
            try await expectLedgerMatchesBalances(ledger, user: "alice")
        }
    }

    @Test("a purchase recorded refunded grants when its refund is reversed", arguments: RoleImplementation.all)
    func recordedRevokedGrantsOnReversal(_ implementation: RoleImplementation) async throws {
        try await implementation.withPurchases { ledger in
            _ = try await ledger.record(Fixture.transaction("t1", user: "alice", revokedAt: 200), grants: Fixture.coins)
            #expect(try await alice(ledger).balances.isEmpty)
            #expect(try await reinstate(ledger, at: 300))
            let customer = try await alice(ledger)
            #expect(customer.balances == ["coins": 100])
            #expect(customer.ledger.map(\.idempotencyKey) == ["grant:t1:coins"])
            #expect(customer.transactions.first?.revocationDate == nil)
        }
    }
}
