import AppStoreModels
import Foundation
import KakinCore
import KakinTestSupport
import Testing

@testable import KakinLedger

/// The contract of ``CustomerLedger``, run against every engine and the in-memory implementation:
/// a customer's transactions page by page, anonymous customers becoming identified ones, app
/// downloads linked to customers, and the customers page's search.
@Suite("Ledger role: customers and aliases")
struct CustomerLedgerContractTests {
    private let anonymous = AnonymousAppUserID.prefix + "0123456789abcdef0123456789abcdef"

    private func customer(_ ledger: any PurchaseRoles, _ user: String) async throws -> CustomerState {
        try await ledger.customer(bundleID: Fixture.bundleID, appUserID: user)
    }

    private func alias(
        _ ledger: any PurchaseRoles, _ from: String, to: String, transfers: Bool = false
    ) async throws -> CustomerAliasOutcome {
        try await ledger.alias(
            bundleID: Fixture.bundleID, anonymousID: from, to: to, transfersOwnership: transfers, at: Fixture.at(500))
    }

    /// Bob buys a subscription (`s1`), and its renewal (`s2`) is recorded for `anonymous`.
    static func shareSubscription(_ ledger: any PurchaseLedger, with anonymous: String) async throws {
        _ = try await ledger.record(
            Fixture.transaction("s1", user: "bob", product: "pro", type: .autoRenewableSubscription), grants: [])
        _ = try await ledger.record(
            Fixture.transaction(
                "s2", original: "s1", user: anonymous, product: "pro", type: .autoRenewableSubscription,
                purchasedAt: 30 * 86_400),
            grants: [])
    }

    @Test("a customer's transactions are read newest first, a page at a time", arguments: RoleImplementation.all)
    func transactionPages(_ implementation: RoleImplementation) async throws {
        try await implementation.withCustomers { ledger in
            for (id, at) in [("a", 10.0), ("b", 20), ("c", 20), ("d", 30), ("e", 5)] {
                _ = try await ledger.record(Fixture.transaction(id, user: "alice", purchasedAt: at), grants: [])
            }
            _ = try await ledger.record(Fixture.transaction("x", user: "bob", purchasedAt: 25), grants: [])
            var pages: [[String]] = []
            var cursor: TransactionCursor?
            while true {
                let page = try await ledger.transactions(
                    bundleID: Fixture.bundleID, appUserID: "alice", limit: 2, after: cursor)
                guard let last = page.last else { break }
                pages.append(page.map(\.transactionID))
                cursor = TransactionCursor(after: last)
            }
            #expect(pages == [["d", "c"], ["b", "a"], ["e"]])
            #expect(
                try await ledger.transactions(bundleID: Fixture.bundleID, appUserID: "alice", limit: 1, after: nil)
                    .first?.signedTransaction == "jws.d", "a page carries the signed JWS")
            #expect(try await customer(ledger, "alice").transactions.map(\.transactionID) == ["e", "a", "b", "c", "d"])
            await #expect(throws: LedgerStoreError.self) {
                try await ledger.transactions(bundleID: Fixture.bundleID, appUserID: "alice", limit: -1, after: nil)
            }
        }
    }

    // MARK: Aliases

    @Test(
        "purchases, ledger lines and balances move once; the same call again changes nothing",
        arguments: RoleImplementation.all)
    func movesOnce(_ implementation: RoleImplementation) async throws {
        try await implementation.withCustomers { ledger in
            _ = try await ledger.record(Fixture.transaction("c1", user: anonymous), grants: Fixture.coins)
            _ = try await ledger.record(
                Fixture.transaction("n1", user: anonymous, product: "removeAds", type: .nonConsumable), grants: [])
            #expect(
                try await ledger.spend(
                    bundleID: Fixture.bundleID, appUserID: anonymous, currency: "coins", amount: 30,
                    idempotencyKey: "s1", at: Fixture.at(20)) == .spent(balance: 70))
            // The identified customer has coins of their own: the balances add up.
            _ = try await ledger.record(Fixture.transaction("c2", user: "alice"), grants: Fixture.coins)

            let first = try await alias(ledger, anonymous, to: "alice")
            #expect(
                first
                    == .aliased(
                        CustomerAliasMove(created: true, transactionIDs: ["c1", "n1"], balances: ["coins": 70])))
            let alice = try await customer(ledger, "alice")
            #expect(Set(alice.transactions.map(\.transactionID)) == ["c1", "c2", "n1"])
            #expect(alice.balances == ["coins": 170])
            #expect(alice.ledger.count == 3)
            try await expectLedgerMatchesBalances(ledger, user: "alice")
            let left = try await customer(ledger, anonymous)
            #expect(left.transactions.isEmpty && left.ledger.isEmpty && left.balances.isEmpty)
            #expect(try await ledger.aliasedCustomer(bundleID: Fixture.bundleID, anonymousID: anonymous) == "alice")

            // Again: nothing moves, nothing is doubled.
            #expect(try await alias(ledger, anonymous, to: "alice") == .aliased(CustomerAliasMove(created: false)))
            #expect(try await customer(ledger, "alice").balances == ["coins": 170])
        }
    }

    @Test(
        "an anonymous ID the app's ledger has never seen records nothing; once seen, its alias is recorded",
        arguments: RoleImplementation.all)
    func unseenAnonymousIDRecordsNothing(_ implementation: RoleImplementation) async throws {
        try await implementation.withCustomers { ledger in
            _ = try await ledger.record(Fixture.transaction("c1", user: "alice"), grants: Fixture.coins)
            // Seen in another app only: still unseen in this one.
            var elsewhere = Fixture.transaction("x1", user: anonymous)
            elsewhere.bundleID = "com.example.other"
            _ = try await ledger.record(elsewhere, grants: Fixture.coins)
            let outcome = try await alias(ledger, anonymous, to: "alice")
            #expect(outcome == .aliased(CustomerAliasMove(created: false)))
            if case .aliased(let move) = outcome { #expect(!move.changedAnything) }
            #expect(try await ledger.aliasedCustomer(bundleID: Fixture.bundleID, anonymousID: anonymous) == nil)
            // Nothing was claimed: another customer's alias is not refused, and is not recorded either.
            #expect(try await alias(ledger, anonymous, to: "bob") == .aliased(CustomerAliasMove(created: false)))
            #expect(try await ledger.aliasedCustomer(bundleID: Fixture.bundleID, anonymousID: anonymous) == nil)
            #expect(try await customer(ledger, "alice").balances == ["coins": 100])
            #expect(
                try await ledger.aliasedCustomer(bundleID: "com.example.other", anonymousID: anonymous) == nil,
                "the other app's customer was not touched")

            // Once it has bought something here, it is seen, and the alias is recorded.
            _ = try await ledger.record(Fixture.transaction("c2", user: anonymous), grants: Fixture.coins)
            #expect(
                try await alias(ledger, anonymous, to: "bob")
                    == .aliased(CustomerAliasMove(created: true, transactionIDs: ["c2"], balances: ["coins": 100])))
            #expect(try await ledger.aliasedCustomer(bundleID: Fixture.bundleID, anonymousID: anonymous) == "bob")
        }
    }

    @Test("an anonymous ID seen only through its app download is aliased", arguments: RoleImplementation.all)
    func appDownloadIsSeen(_ implementation: RoleImplementation) async throws {
        try await implementation.withCustomers { ledger in
            try await ledger.linkAppTransaction(
                bundleID: Fixture.bundleID, appTransactionID: "download-1", appUserID: anonymous, environment: .sandbox,
                at: Fixture.at(1))
            #expect(try await alias(ledger, anonymous, to: "alice") == .aliased(CustomerAliasMove(created: true)))
            #expect(try await ledger.aliasedCustomer(bundleID: Fixture.bundleID, anonymousID: anonymous) == "alice")
            #expect(
                try await ledger.appTransactionCustomer(bundleID: Fixture.bundleID, appTransactionID: "download-1")
                    == "alice")
            #expect(
                try await ledger.appTransactions(bundleID: Fixture.bundleID, appUserID: "alice").map(\.appTransactionID)
                    == ["download-1"])
            #expect(try await ledger.appTransactions(bundleID: Fixture.bundleID, appUserID: anonymous).isEmpty)
        }
    }

    @Test("an anonymous ID becomes one customer only", arguments: RoleImplementation.all)
    func oneTarget(_ implementation: RoleImplementation) async throws {
        try await implementation.withCustomers { ledger in
            _ = try await ledger.record(Fixture.transaction("c1", user: anonymous), grants: Fixture.coins)
            _ = try await alias(ledger, anonymous, to: "alice")
            #expect(try await alias(ledger, anonymous, to: "bob") == .aliasedToAnotherCustomer("alice"))
            #expect(try await customer(ledger, "bob").transactions.isEmpty)
            #expect(try await customer(ledger, "alice").balances == ["coins": 100])
        }
    }

    @Test("IDs that cannot alias are refused", arguments: RoleImplementation.all)
    func refusals(_ implementation: RoleImplementation) async throws {
        try await implementation.withCustomers { ledger in
            _ = try await ledger.record(Fixture.transaction("c1", user: anonymous), grants: Fixture.coins)
            for (from, to) in [("alice", "bob"), (anonymous, ""), (anonymous, AnonymousAppUserID.make())] {
                await #expect(throws: LedgerStoreError.self) { try await alias(ledger, from, to: to) }
            }
            #expect(try await ledger.aliasedCustomer(bundleID: Fixture.bundleID, anonymousID: anonymous) == nil)
        }
    }

    @Test("what reaches the anonymous ID after the alias moves with the next call", arguments: RoleImplementation.all)
    func sweepsLateArrivals(_ implementation: RoleImplementation) async throws {
        try await implementation.withCustomers { ledger in
            _ = try await ledger.record(Fixture.transaction("c1", user: anonymous), grants: Fixture.coins)
            _ = try await alias(ledger, anonymous, to: "alice")
            _ = try await ledger.record(Fixture.transaction("c2", user: anonymous), grants: Fixture.coins)
            #expect(
                try await alias(ledger, anonymous, to: "alice")
                    == .aliased(CustomerAliasMove(created: false, transactionIDs: ["c2"], balances: ["coins": 100])))
            #expect(try await customer(ledger, "alice").balances == ["coins": 200])
        }
    }

    @Test(
        "a purchase another identified customer holds part of follows the transfer policy",
        arguments: RoleImplementation.all)
    func transferPolicy(_ implementation: RoleImplementation) async throws {
        for transfers in [false, true] {
            try await implementation.withCustomers { ledger in
                try await Self.shareSubscription(ledger, with: anonymous)
                let outcome = try await alias(ledger, anonymous, to: "alice", transfers: transfers)
                let bob = try await customer(ledger, "bob").transactions.map(\.transactionID)
                let alice = try await customer(ledger, "alice").transactions.map(\.transactionID)
                if transfers {
                    #expect(
                        outcome
                            == .aliased(
                                CustomerAliasMove(created: true, transactionIDs: ["s2"], transferredPurchases: ["s1"])))
                    #expect(bob.isEmpty)
                    #expect(Set(alice) == ["s1", "s2"])
                } else {
                    #expect(
                        outcome
                            == .aliased(CustomerAliasMove(created: true, transactionIDs: ["s2"], keptPurchases: ["s1"]))
                    )
                    #expect(bob == ["s1"])
                    #expect(alice == ["s2"])
                }
            }
        }
    }

    @Test(
        "concurrent aliases of one anonymous ID: one target wins, everything moves once",
        arguments: RoleImplementation.all)
    func concurrentAliases(_ implementation: RoleImplementation) async throws {
        try await implementation.withCustomers { ledger in
            for index in 0..<5 {
                _ = try await ledger.record(Fixture.transaction("c\(index)", user: anonymous), grants: Fixture.coins)
            }
            let outcomes = try await concurrently(8) { index in
                try await alias(ledger, anonymous, to: index % 2 == 0 ? "alice" : "bob")
            }
            let winner = try #require(
                try await ledger.aliasedCustomer(bundleID: Fixture.bundleID, anonymousID: anonymous))
            let loser = winner == "alice" ? "bob" : "alice"
            #expect(outcomes.filter { $0 == .aliasedToAnotherCustomer(winner) }.count == 4)
            var moved: [String] = []
            for case .aliased(let move) in outcomes { moved += move.transactionIDs }
            #expect(moved.sorted() == (0..<5).map { "c\($0)" })
            #expect(try await customer(ledger, winner).balances == ["coins": 500])
            #expect(try await customer(ledger, loser).transactions.isEmpty)
            try await expectLedgerMatchesBalances(ledger, user: winner)
        }
    }

    // MARK: App downloads

    @Test(
        "an app download belongs to the customer it was linked to last; a customer's are listed newest first",
        arguments: RoleImplementation.all)
    func appDownloads(_ implementation: RoleImplementation) async throws {
        try await implementation.withCustomers { ledger in
            func link(
                _ id: String, to user: String, at seconds: TimeInterval, bundleID: String = Fixture.bundleID
            )
                async throws
            {
                try await ledger.linkAppTransaction(
                    bundleID: bundleID, appTransactionID: id, appUserID: user, environment: .sandbox,
                    at: Fixture.at(seconds))
            }
            try await link("d1", to: "alice", at: 1)
            try await link("d2", to: "alice", at: 3)
            try await link("d3", to: "alice", at: 3)
            try await link("d1", to: "bob", at: 4)
            try await link("d4", to: "alice", at: 5, bundleID: "com.example.other")
            let alices = try await ledger.appTransactions(bundleID: Fixture.bundleID, appUserID: "alice")
            #expect(alices.map(\.appTransactionID) == ["d2", "d3"])
            #expect(alices.map(\.linkedAt) == [Fixture.at(3), Fixture.at(3)])
            #expect(
                try await ledger.appTransactionCustomer(bundleID: Fixture.bundleID, appTransactionID: "d1") == "bob")
            #expect(try await ledger.appTransactionCustomer(bundleID: Fixture.bundleID, appTransactionID: "d4") == nil)
            #expect(
                try await ledger.appTransactionCustomer(bundleID: "com.example.other", appTransactionID: "d4")
                    == "alice")

            for index in 0..<55 { try await link("many-\(index)", to: "carol", at: 10 + Double(index)) }
            let carols = try await ledger.appTransactions(bundleID: Fixture.bundleID, appUserID: "carol")
            #expect(carols.count == 50)
            #expect(carols.first?.appTransactionID == "many-54")
        }
    }

    // MARK: Search

    @Test(
        "customers are found by user ID prefix (any case, wildcards literal) or by transaction ID",
        arguments: RoleImplementation.all)
    func findCustomers(_ implementation: RoleImplementation) async throws {
        try await implementation.withCustomers { ledger in
            _ = try await ledger.record(Fixture.transaction("t1", user: "alice", purchasedAt: 0), grants: Fixture.coins)
            _ = try await ledger.record(
                Fixture.transaction("t2", user: "alice", purchasedAt: 50), grants: Fixture.coins)
            _ = try await ledger.record(Fixture.transaction("t3", user: "al_x", purchasedAt: 20), grants: [])
            _ = try await ledger.record(Fixture.transaction("t4", user: "bob", purchasedAt: 30), grants: [])
            _ = try await ledger.record(
                Fixture.transaction("t5", original: "t4", user: nil, purchasedAt: 40), grants: [])

            let byPrefix = try await ledger.findCustomers(matching: "AL", limit: 10)
            #expect(byPrefix.map(\.appUserID) == ["alice", "al_x"])
            #expect(byPrefix.first?.transactionCount == 2)
            #expect(byPrefix.first?.lastPurchaseDate == Fixture.at(50))
            #expect(try await ledger.findCustomers(matching: "al_", limit: 10).map(\.appUserID) == ["al_x"])
            #expect(try await ledger.findCustomers(matching: "a%", limit: 10).isEmpty)
            #expect(try await ledger.findCustomers(matching: "t3", limit: 10).map(\.appUserID) == ["al_x"])
            #expect(try await ledger.findCustomers(matching: "t4", limit: 10).map(\.appUserID) == ["bob"])
            #expect(try await ledger.findCustomers(matching: "", limit: 2).map(\.appUserID) == ["alice", "bob"])
            #expect(
                try await ledger.findCustomers(matching: "", limit: 10, bundleID: "com.example.other").isEmpty,
                "of one app")
        }
    }

    @Test("recent customers are found past a page of one customer's purchases", arguments: RoleImplementation.all)
    func recentCustomersPastAPage(_ implementation: RoleImplementation) async throws {
        try await implementation.withCustomers { ledger in
            _ = try await ledger.record(Fixture.transaction("d1", user: "dave", purchasedAt: 10), grants: [])
            _ = try await ledger.record(Fixture.transaction("c1", user: "carol", purchasedAt: 20), grants: [])
            _ = try await ledger.record(Fixture.transaction("n1", user: nil, purchasedAt: 25), grants: [])
            _ = try await ledger.record(Fixture.transaction("c2", user: "carol", purchasedAt: 30), grants: [])
            // More of one customer's purchases, all newer, than the walk reads at a time.
            let many = CustomerSearch.page + 20
            for index in 0..<many {
                _ = try await ledger.record(
                    Fixture.transaction("w\(index)", user: "whale", purchasedAt: 100 + Double(index)), grants: [])
            }
            let recent = try await ledger.findCustomers(matching: "", limit: 3)
            #expect(recent.map(\.appUserID) == ["whale", "carol", "dave"])
            #expect(recent.map(\.transactionCount) == [many, 2, 1])
            #expect(recent.first?.lastPurchaseDate == Fixture.at(100 + Double(many - 1)))
            #expect(try await ledger.findCustomers(matching: "", limit: 2).map(\.appUserID) == ["whale", "carol"])
            #expect(try await ledger.findCustomers(matching: "", limit: 0).isEmpty)
        }
    }

    @Test(
        "a prefix search takes the first IDs in order, shown newest purchase first", arguments: RoleImplementation.all)
    func prefixSearch(_ implementation: RoleImplementation) async throws {
        try await implementation.withCustomers { ledger in
            for (index, user) in ["User-03", "user-01", "user-02", "user-00", "users", "other"].enumerated() {
                _ = try await ledger.record(
                    Fixture.transaction("t\(index)", user: user, purchasedAt: Double(index)), grants: [])
            }
            let first = try await ledger.findCustomers(matching: "USER-", limit: 3)
            #expect(first.map(\.appUserID) == ["user-00", "user-02", "user-01"])
            let all = try await ledger.findCustomers(matching: "user", limit: 10)
            #expect(all.map(\.appUserID) == ["users", "user-00", "user-02", "user-01", "User-03"])
            // An exact transaction ID finds its owner even when their ID does not match.
            #expect(try await ledger.findCustomers(matching: "t5", limit: 10).map(\.appUserID) == ["other"])
        }
    }
}
