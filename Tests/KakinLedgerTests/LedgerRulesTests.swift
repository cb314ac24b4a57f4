import KakinTestSupport
import Testing

@testable import KakinLedger

/// The ledger's rules on their own, without a database.
@Suite("Ledger rules")
struct LedgerRulesTests {
    @Test("a purchase credits amount × quantity once per currency, in the order of the currencies' names")
    func credits() throws {
        let purchase = Fixture.transaction("t1", user: "alice", quantity: 3)
        let credits = try LedgerRules.credits(
            of: purchase,
            grants: [
                .currency("gems", amount: 5), .entitlement("pro"), .currency("coins", amount: 100),
                .currency("gems", amount: 2), .currency("empty", amount: 0),
            ], quantity: 3)
        #expect(
            credits == [
                CurrencyCredit(currency: "coins", amount: 300, idempotencyKey: "grant:t1:coins"),
                CurrencyCredit(currency: "gems", amount: 21, idempotencyKey: "grant:t1:gems"),
            ])
        #expect(try LedgerRules.credits(of: purchase, grants: [], quantity: 1).isEmpty)
    }

    @Test("bad grants and quantities are refused before anything is written")
    func refusals() {
        let purchase = Fixture.transaction("t1", user: "alice")
        for (grants, quantity) in [
            ([Grant.currency("coins", amount: 1)], 0),
            ([.currency("", amount: 1)], 1),
            ([.currency("coins", amount: -1)], 1),
            ([.currency("coins", amount: .max), .currency("coins", amount: 1)], 1),
            ([.currency("coins", amount: .max / 2)], 3),
        ] as [([Grant], Int)] {
            #expect(throws: LedgerStoreError(.invalidArgument)) {
                try LedgerRules.credits(of: purchase, grants: grants, quantity: quantity)
            }
        }
        #expect(throws: LedgerStoreError(.invalidArgument)) {
            try LedgerRules.validate(LedgerIngest(purchase, grants: [], summary: (recent: -1, withJWS: false)))
        }
    }

    @Test("a refund takes back its share rounded down, and later shares add up to the whole")
    func creditShares() {
        let whole = RecordedTransaction.wholeShare
        #expect(LedgerRules.creditShare(100, share: whole) == 100)
        #expect(LedgerRules.creditShare(100, share: 33_333) == 33)
        #expect(LedgerRules.creditShare(100, share: 50_000) == 50)
        #expect(LedgerRules.creditShare(.max, share: whole) == .max, "no overflow on the largest credit")
        // A 33.333 % refund, then a 50 % one, then the whole: each takes its share less what was taken.
        var taken: Int64 = 0
        for share in [33_333, 50_000, whole] {
            taken += LedgerRules.creditShare(100, share: share) - taken
        }
        #expect(taken == 100)
        #expect(LedgerRules.clawbackKey(transactionID: "t1", currency: "coins", share: whole) == "clawback:t1:coins")
        #expect(
            LedgerRules.clawbackKey(transactionID: "t1", currency: "coins", share: 50_000)
                == "clawback:t1:coins:50000")
    }

    @Test("a purchase seen before is a duplicate for its owner and refused for anyone else")
    func outcomes() {
        #expect(LedgerRules.outcome(storedOwner: "alice", claimedBy: "alice") == .duplicate(ownerAssigned: false))
        #expect(LedgerRules.outcome(storedOwner: "alice", claimedBy: nil) == .duplicate(ownerAssigned: false))
        #expect(LedgerRules.outcome(storedOwner: "alice", claimedBy: "bob") == .ownedByAnotherCustomer("alice"))
    }
}
