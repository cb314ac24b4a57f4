import AppStoreModels
import Foundation
import Testing

@testable import KakinServer
@testable import KakinLedger

/// The PostgreSQL ledger's batches: a writer's group records its new purchases in a few
/// statements, and reads asked for at the same moment are read together. Each test checks that
/// batches of more than one really formed, and that what they wrote and read is exactly what the
/// one-by-one path writes and reads.
@Suite("PostgreSQL ledger: batches")
struct PostgresBatchTests {
    /// A store on a schema of its own with one writer, so that concurrent writes form groups.
    private func withBatchingStore(_ body: (SQLLedgerStore, PostgresLedgerEngine) async throws -> Void) async throws {
        guard PostgresTestDatabase.url != nil else {
            print(PostgresTestDatabase.skipMessage)
            return
        }
        try await PostgresTestDatabase.withSchema { schema in
            var options = try PostgresTestDatabase.options(schema: schema)
            options.writers = 1
            let store = try SQLLedgerStore.postgres(options)
            try await withMigratedStore(store) { store in
                try await body(store, try #require(store.postgres))
            }
        }
    }

    @Test("a group's purchases are recorded together, credited once each, with each credit's balance in order")
    func groupRecordsTogether() async throws {
        try await withBatchingStore { store, engine in
            let users = ["ann", "ben", "cy"]
            // 240 uploads: 200 distinct purchases (a few of two currencies, without owner, or
            // revoked, which the batch leaves to their own jobs) and 40 repeating one of them.
            let results = try await concurrently(240) { index in
                let id = "t\(index % 200)"
                let user = users[(index % 200) % users.count]
                let transaction: RecordedTransaction
                var grants = [Grant.currency("coins", amount: Int64(1 + index % 200))]
                switch index % 200 {
                case 7: transaction = Fixture.transaction(id)
                case 11: transaction = Fixture.transaction(id, user: user, revokedAt: 30)
                case 13:
                    transaction = Fixture.transaction(id, user: user)
                    grants.append(.currency("gems", amount: 5))
                case 17: transaction = Fixture.transaction(id, user: user, product: "pro", type: .nonConsumable)
                default: transaction = Fixture.transaction(id, user: user, quantity: 1 + index % 3)
                }
                let (outcome, summary) = try await store.recordAndSummarize(
                    transaction, grants: grants, recent: index % 2, withJWS: index % 4 == 0)
                return (index, outcome, summary)
            }
            #expect(engine.writers[0].largestBatchDecided > 1, "no group recorded more than one purchase together")

            #expect(results.filter { $0.1 == .recorded }.count == 200)
            #expect(results.filter { $0.1 == .duplicate(ownerAssigned: false) }.count == 40)
            for (index, outcome, summary) in results where outcome == .recorded && ![7, 11].contains(index % 200) {
                let summary = try #require(summary)
                #expect(summary.appUserID == users[(index % 200) % users.count])
                #expect(summary.transactionCount >= 1)
                #expect(summary.balances["coins", default: 0] >= Int64(1 + index % 200))
                #expect(summary.recentTransactions.count == index % 2)
                #expect(summary.accessTransactions.allSatisfy { $0.productType != .consumable })
                if index % 200 == 17 { #expect(summary.accessTransactions.map(\.transactionID).contains("t17")) }
            }
            for user in users {
                try await expectLedgerMatchesBalances(store, user: user)
                let separate = try await store.customerSummary(
                    bundleID: Fixture.bundleID, appUserID: user, recent: 0, withJWS: false)
                let direct = try await SQLLedgerStore.summary(
                    bundleID: Fixture.bundleID, appUserID: user, recent: 0, withJWS: false, on: store.database)
                #expect(separate == direct)
            }
            let customer = try await store.customer(bundleID: Fixture.bundleID, appUserID: "ann")
            #expect(customer.ledger.allSatisfy { $0.kind == .credit })
            #expect(Set(customer.ledger.map(\.idempotencyKey)).count == customer.ledger.count)

            // Every credit's event carries the balance right after it, in the order of the events.
            let events = try await store.dueEvents(endpoint: "test", now: Fixture.at(1_000_000), limit: 10_000)
            #expect(events.filter { $0.type == "transaction.recorded" }.count == 200)
            var running: [String: Int64] = [:]
            for event in events.sorted(by: { $0.id < $1.id }) where event.type == "balance.credited" {
                let payload = try JSONDecoder().decode(Credited.self, from: event.payload)
                let key = "\(event.appUserID ?? "")/\(payload.currency)"
                running[key, default: 0] += payload.amount
                #expect(payload.balance == running[key], "\(payload.idempotencyKey)")
            }
            for user in users {
                let balances = try await store.customer(bundleID: Fixture.bundleID, appUserID: user).balances
                for (currency, amount) in balances { #expect(running["\(user)/\(currency)"] == amount) }
            }
        }
    }

    @Test("one batch statement: each summary is the customer's state after it, each event as the one-by-one path writes it")
    func oneStatementAsOneByOne() async throws {
        try await withBatchingStore { store, _ in
            _ = try await store.record(Fixture.transaction("old-coins", user: "ann"), grants: Fixture.coins)
            _ = try await store.record(
                Fixture.transaction("old-pro", user: "ann", product: "pro", type: .nonConsumable), grants: [])
            _ = try await store.record(
                Fixture.transaction("old-gems", user: "ben"), grants: [.currency("gems", amount: 5)])
            let before = try await store.dueEvents(endpoint: "test", now: Fixture.at(1_000_000), limit: 100).count

            func item(_ transaction: RecordedTransaction, coins: Int64?, recent: Int, withJWS: Bool) -> SQLLedgerStore.RecordBatchItem {
                SQLLedgerStore.RecordBatchItem(
                    transaction: transaction, digest: LedgerRows.signedDigest(transaction.signedTransaction),
                    unitCredits: coins.map { [("coins", $0)] } ?? [], recent: recent, withJWS: withJWS)
            }
            let b1 = Fixture.transaction("b1", user: "ann", quantity: 2)
            let b2 = Fixture.transaction("b2", user: "ben")
            let b3 = Fixture.transaction("b3", user: "ann", product: "pro2", type: .nonConsumable)
            let b4 = Fixture.transaction("b4", user: "ann", purchasedAt: 5)
            let items = [
                item(b1, coins: 10, recent: 0, withJWS: false), item(b2, coins: 7, recent: 2, withJWS: true),
                item(b3, coins: nil, recent: 1, withJWS: true), item(b4, coins: 5, recent: 0, withJWS: false),
                item(Fixture.transaction("old-coins", user: "ann"), coins: 100, recent: 0, withJWS: false),
                item(Fixture.transaction("refunded", user: "ann", revokedAt: 20), coins: 100, recent: 0, withJWS: false),
            ]
            let results = try await SQLLedgerStore.recordBatch(items, on: store.database)

            #expect(results[4] == nil, "a purchase held already is left to its own job")
            #expect(results[5] == nil, "a revoked purchase is left to its own job")
            for (index, result) in results.prefix(4).enumerated() {
                let outcome = try #require(result as? LedgerIngestOutcome)
                let item = items[index]
                #expect(outcome.recorded == .recorded)
                let direct = try await SQLLedgerStore.summary(
                    bundleID: Fixture.bundleID, appUserID: item.transaction.appUserID ?? "", recent: item.recent,
                    withJWS: item.withJWS, on: store.database)
                #expect(outcome.summary == direct, "item \(index)")
            }
            let ann = try #require((results[0] as? LedgerIngestOutcome)?.summary)
            #expect(ann.balances == ["coins": 125])
            #expect(ann.transactionCount == 5)
            #expect(ann.accessTransactions.map(\.transactionID) == ["b3", "old-pro"])
            let ben = try #require((results[1] as? LedgerIngestOutcome)?.summary)
            #expect(ben.balances == ["coins": 7, "gems": 5])
            #expect(ben.recentTransactions.count == 2 && ben.recentTransactions.allSatisfy { $0.signedTransaction != nil })

            // The events, in the items' order, with the bodies the one-by-one path writes.
            func credited(_ transaction: RecordedTransaction, _ unit: Int64, balance: Int64) throws -> String {
                let credit = try SQLLedgerStore.GrantCredit(
                    currency: "coins", unit: unit, quantity: transaction.quantity, of: transaction,
                    owner: transaction.appUserID ?? "", at: LedgerTime.milliseconds(transaction.recordedAt))
                return SQLLedgerStore.eventJSON(credit.eventPayload(balance: balance))
            }
            func recorded(_ transaction: RecordedTransaction) -> String {
                SQLLedgerStore.eventJSON(SQLLedgerStore.recordedEventPayload(transaction, ownerAssigned: false))
            }
            let events = try await store.dueEvents(endpoint: "test", now: Fixture.at(1_000_000), limit: 100)
                .dropFirst(before)
            #expect(events.map(\.type) == [
                "transaction.recorded", "balance.credited", "transaction.recorded", "balance.credited",
                "transaction.recorded", "transaction.recorded", "balance.credited",
            ])
            #expect(events.map { String(decoding: $0.payload, as: UTF8.self) } == [
                recorded(b1), try credited(b1, 10, balance: 120), recorded(b2), try credited(b2, 7, balance: 7),
                recorded(b3), recorded(b4), try credited(b4, 5, balance: 125),
            ])
            #expect(events.map(\.appUserID) == ["ann", "ann", "ben", "ben", "ann", "ann", "ann"])
            try await expectLedgerMatchesBalances(store, user: "ann")
            try await expectLedgerMatchesBalances(store, user: "ben")
        }
    }

    private struct Credited: Decodable {
        let currency: String
        let amount: Int64
        let balance: Int64
        let idempotencyKey: String
    }

    @Test("digest lookups and summaries asked for at once are read together, each as a read of its own gives it")
    func readsTogether() async throws {
        try await withBatchingStore { store, engine in
            let users = (0..<12).map { "user\($0)" }
            for (index, user) in users.enumerated() {
                _ = try await store.record(Fixture.transaction("c\(index)", user: user), grants: Fixture.coins)
                _ = try await store.record(
                    Fixture.transaction("s\(index)", user: user, product: "monthly", type: .autoRenewableSubscription),
                    grants: [])
            }
            let lookups = try await concurrently(300) { index -> (Int, KnownSignedTransaction?, CustomerSummary) in
                let id = index % 3 == 0 ? "unknown\(index)" : "c\(index % users.count)"
                let known = try await store.signedTransaction(digest: SignedDigest("jws.\(id)"))
                let summary = try await store.customerSummary(
                    bundleID: Fixture.bundleID, appUserID: users[index % users.count], recent: 0,
                    withJWS: index % 2 == 0)
                return (index, known, summary)
            }
            #expect(engine.digestReads.largestBatch > 1, "no two digest lookups were read together")
            #expect(engine.summaryReads.largestBatch > 1, "no two summaries were read together")
            for (index, known, summary) in lookups {
                let user = users[index % users.count]
                if index % 3 == 0 {
                    #expect(known == nil)
                } else {
                    #expect(known?.transactionID == "c\(index % users.count)")
                    #expect(known?.appUserID == user)
                }
                let direct = try await SQLLedgerStore.summary(
                    bundleID: Fixture.bundleID, appUserID: user, recent: 0, withJWS: index % 2 == 0, on: store.database)
                #expect(summary == direct)
                #expect(summary.balances == ["coins": 100])
                #expect(summary.accessTransactions.map(\.transactionID) == ["s\(index % users.count)"])
                #expect((summary.accessTransactions.first?.signedTransaction != nil) == (index % 2 == 0))
            }
        }
    }

    @Test("a duplicate's lookup and its owner's summary read together, as the two reads of their own give them")
    func duplicatesTogether() async throws {
        try await withBatchingStore { store, engine in
            // Every lookup is a statement here: uploads look up first only while duplicates are common.
            #expect(store.signedDigestLookupsAreRemote)
            let users = (0..<10).map { "user\($0)" }
            for (index, user) in users.enumerated() {
                _ = try await store.record(Fixture.transaction("c\(index)", user: user), grants: Fixture.coins)
                _ = try await store.record(
                    Fixture.transaction("s\(index)", user: user, product: "monthly", type: .autoRenewableSubscription),
                    grants: [])
            }
            _ = try await store.record(Fixture.transaction("ownerless"), grants: Fixture.coins)
            let lookups = try await concurrently(300) { index in
                let id =
                    switch index % 4 {
                    case 0: "unknown\(index)"
                    case 1: "ownerless"
                    case 2: "s\(index % users.count)"
                    default: "c\(index % users.count)"
                    }
                return (index, id, try await store.signedTransactionAndSummary(digest: SignedDigest("jws.\(id)")))
            }
            #expect(engine.duplicateReads.largestBatch > 1, "no two duplicates were read together")
            var separate: [String: CustomerSummary] = [:]
            for user in users {
                separate[user] = try await SQLLedgerStore.summary(
                    bundleID: Fixture.bundleID, appUserID: user, recent: 0, withJWS: false, on: store.database)
            }
            for (index, id, found) in lookups {
                switch index % 4 {
                case 0: #expect(found == nil)
                case 1:
                    #expect(found?.known.transactionID == "ownerless")
                    #expect(found?.known.appUserID == nil)
                    #expect(found != nil && found?.summary == nil, "no summary without an owner")
                default:
                    let user = users[index % users.count]
                    #expect(
                        found?.known
                            == KnownSignedTransaction(
                                transactionID: id, bundleID: Fixture.bundleID, environment: .sandbox, appUserID: user))
                    #expect(found?.summary == separate[user])
                    #expect(found?.summary?.balances == ["coins": 100])
                    #expect(found?.summary?.accessTransactions.map(\.transactionID) == ["s\(index % users.count)"])
                }
            }
        }
    }

    @Test("batch lists: padded to a power of two by repeating the last element")
    func sizes() {
        #expect(SQLLedgerStore.padded([7][...]) == [7])
        #expect(SQLLedgerStore.padded([1, 2, 3, 4, 5][...]) == [1, 2, 3, 4, 5, 5, 5, 5])
        #expect(SQLLedgerStore.padded(Array(0..<100)[64...]) == Array(64..<100) + Array(repeating: 99, count: 28))
        #expect(SQLLedgerStore.paddedSize(0) == 1)
        #expect(SQLLedgerStore.paddedSize(1) == 1)
        #expect(SQLLedgerStore.paddedSize(5) == 8)
        #expect(SQLLedgerStore.paddedSize(64) == 64)
    }
}
