import AppStoreModels
import Foundation
import KakinCore
import KakinTestSupport
import Testing

@testable import KakinLedger

/// Purchases other than subscriptions are kept in the metrics by the writes that change them: the
/// rollups come out as the job worked them out from every purchase's transactions.
@Suite("Ledger: metrics of purchases kept in their writes")
struct PurchaseMetricsTests {
    static let day: Int64 = 86_400_000
    static let start: Int64 = 1_705_708_800_000  // 2024-01-20 00:00 UTC: the month runs into February
    static let anonymous = AnonymousAppUserID.prefix + "0123456789abcdef0123456789abcdef"

    /// A small deterministic generator: the same month every run.
    struct Generator {
        var state: UInt64
        mutating func next(_ bound: Int) -> Int {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Int((state >> 33) % UInt64(bound))
        }
        mutating func chance(_ percent: Int) -> Bool { next(100) < percent }
    }

    /// What the ledger was told, as the test keeps it.
    struct Played {
        var ids: [String] = []
        /// The share of each transaction revoked in part (milliunits of a percent).
        var shares: [String: Int] = [:]
        var revoked: Set<String> = []
        var purchases: [String: RecordedTransaction] = [:]

        /// Records `transaction` in `store` (moving it to its owner with `transfers`), and notes it.
        mutating func record(
            _ transaction: RecordedTransaction, in store: any PurchaseLedger, transfers: Bool = false
        ) async throws {
            _ = try await store.ingest(LedgerIngest(transaction, grants: [], transfersOwnership: transfers))
            if !ids.contains(transaction.transactionID) { ids.append(transaction.transactionID) }
            purchases[transaction.transactionID] = transaction
        }
    }

    static func purchase(
        _ id: String, user: String?, kind: Int, at instant: Int64, quantity: Int = 1, original: String? = nil
    ) -> RecordedTransaction {
        let (product, type, price): (String, ProductType, Int64) =
            switch kind {
            case 0: ("coins100", .consumable, 990)
            case 1: ("coins500", .consumable, 3_990)
            case 2: ("removeAds", .nonConsumable, 2_990)
            case 3: ("season", .nonRenewingSubscription, 14_990)
            case 4: ("familyPack", .nonConsumable, 0)
            default: ("freeGift", .consumable, 0)
            }
        let japan = id.utf8.reduce(0) { $0 + Int($1) } % 3 == 0
        var fields = ["storefront": japan ? "JPN" : "USA"]
        if kind == 4 { fields["inAppOwnershipType"] = "FAMILY_SHARED" }
        return RecordedTransaction(
            transactionID: id, originalTransactionID: original ?? id, bundleID: Fixture.bundleID, appUserID: user,
            productID: product, productType: type, quantity: quantity, purchaseDate: LedgerTime.date(instant),
            expiresDate: type == .nonRenewingSubscription ? LedgerTime.date(instant + 30 * day) : nil,
            environment: .sandbox, signedTransaction: SubscriptionMetricsTests.jws(fields), source: .app,
            recordedAt: LedgerTime.date(instant), price: japan ? price * 120 : price, currency: japan ? "JPY" : "USD")
    }

    /// The rollups worked out from scratch from every transaction the ledger holds, one purchase
    /// (original transaction ID) at a time, as the job worked out every purchase before.
    static func fromScratch(_ store: any PurchaseLedger, _ played: Played) async throws -> MetricContributions {
        var units: [String: [MetricTransaction]] = [:]
        for id in played.ids {
            let transaction = try #require(try await store.transaction(id: id))
            var row = TransactionRow(transaction, owner: transaction.appUserID, signedDigest: nil)
            row.revocationDate = transaction.revocationDate.map(LedgerTime.milliseconds)
            row.revocationReason = transaction.revocationReason.map { Int64($0.rawValue) }
            row.revocationPercentage = row.revocationDate == nil ? nil : played.shares[id].map(Int64.init)
            units[transaction.originalTransactionID, default: []].append(MetricTransaction(row))
        }
        var total = MetricContributions()
        var owners: [MetricsUpdate.CustomerKey: [String: MetricUnitRecord]] = [:]
        for (original, transactions) in units {
            let unit = MetricUnit(
                bundleID: Fixture.bundleID, originalTransactionID: original, transactions: transactions, graceExpiries: [])
            total.merge(unit.contributions)
            owners[
                MetricsUpdate.CustomerKey(bundleID: Fixture.bundleID, environment: unit.environment, customer: unit.customer),
                default: [:]
            ][original] = MetricUnitRecord(unit)
        }
        for (customer, purchases) in owners {
            var update = MetricsUpdate()
            _ = update.update(customer: customer, stored: nil, purchases: purchases)
            total.merge(update.change)
        }
        return total
    }

    /// The rollups the ledger holds, as the metrics read them, keyed as ``fromScratch(_:_:)`` keys them.
    static func held(_ store: any MetricsLedger) async throws -> MetricContributions {
        while try await store.updateMetrics(limit: 50) > 0 {}
        let firstDay = Int(start / day)
        let reading = try await store.metrics(
            bundleID: Fixture.bundleID, environment: .sandbox, days: (firstDay - 60)...(firstDay + 120),
            now: LedgerTime.date(start + 40 * day))
        #expect(reading.before.isEmpty)
        var held = MetricContributions()
        for row in reading.days {
            held.merge(
                row.counts,
                into: MetricDayKey(
                    bundleID: Fixture.bundleID, environment: "Sandbox", day: row.day, productID: row.productID,
                    storefront: row.storefront, currency: row.currency))
        }
        for cohort in reading.cohorts {
            held.add(
                cohort.value,
                to: MetricCohortKey(
                    bundleID: Fixture.bundleID, environment: "Sandbox", kind: cohort.kind.rawValue, cohort: cohort.cohort,
                    offset: cohort.offset, currency: cohort.currency))
        }
        return held
    }

    @Test(
        "a month of purchases, refunds, reinstatements, owners found late, moves and an alias: the rollups the job worked out from scratch",
        arguments: StoreKind.allCases)
    func aMonth(kind: StoreKind) async throws {
        try await withLedgerStore(kind) { store in
            var random = Generator(state: 56)
            var played = Played()
            let customers = ["alice", "bob", "carol", "dave", Self.anonymous]
            var unowned: [String] = []
            var serial = 0
            func record(_ transaction: RecordedTransaction, transfers: Bool = false) async throws {
                try await played.record(transaction, in: store, transfers: transfers)
            }
            // A subscription among them, so that the job and the writes both change alice's figures.
            for (index, offset) in [Int64(3), 33].enumerated() {
                try await record(
                    SubscriptionMetricsTests.subscription(
                        "s\(index)", original: "s0", user: "alice", from: Self.start + offset * Self.day, days: 30))
            }
            for dayIndex in Int64(0)..<30 {
                let now = Self.start + dayIndex * Self.day + 3_600_000
                for _ in 0..<3 {
                    serial += 1
                    let owner: String? = random.chance(15) ? nil : customers[random.next(customers.count)]
                    // Now and then bought days before the ledger hears of it.
                    let bought = now - Int64(random.chance(30) ? random.next(12) : 0) * Self.day
                    let transaction = Self.purchase(
                        "p\(serial)", user: owner, kind: random.next(6), at: max(Self.start, bought),
                        quantity: 1 + random.next(3))
                    try await record(transaction)
                    if owner == nil { unowned.append(transaction.transactionID) }
                }
                if dayIndex == 0 {
                    // Purchases other than subscriptions leave the job nothing to work out: one
                    // step works out the subscription and folds the rollup changes the writes
                    // appended, and nothing is left for the next.
                    let appended = try await Self.changeRows(store)
                    #expect(appended > 0)
                    #expect(try await store.updateMetrics(limit: 50) == 1 + appended)
                    #expect(try await Self.changeRows(store) == 0)
                    #expect(try await store.updateMetrics(limit: 50) == 0)
                }
                // A refund, in full or in part, for a problem with the app or not.
                if random.chance(60), let id = played.ids.filter({ $0.hasPrefix("p") && !played.revoked.contains($0) })
                    .randomElement(using: &random)
                {
                    let share = random.chance(40) ? (2 + random.next(7)) * 10_000 : RecordedTransaction.wholeShare
                    if try await store.revoke(
                        transactionID: id, at: LedgerTime.date(now + 60_000), reason: random.next(2), share: share,
                        policy: .clampAtZero)
                    {
                        played.revoked.insert(id)
                        played.shares[id] = share < RecordedTransaction.wholeShare ? share : nil
                    }
                }
                // Apple reverses a refund.
                if random.chance(25), let id = played.revoked.sorted().randomElement(using: &random) {
                    #expect(try await store.reinstate(transactionID: id, reversedAt: LedgerTime.date(now + 120_000), grants: []))
                    played.revoked.remove(id)
                    played.shares[id] = nil
                }
                // A purchase recorded without its owner is told its owner.
                if random.chance(40), let id = unowned.first {
                    unowned.removeFirst()
                    var transaction = try #require(played.purchases[id])
                    transaction.appUserID = customers[random.next(4)]
                    try await record(transaction)
                }
                // A non-consumable restored by another customer moves to them.
                if random.chance(20), let id = played.ids.filter({
                    played.purchases[$0]?.productType == .nonConsumable && played.purchases[$0]?.appUserID != nil
                }).randomElement(using: &random) {
                    var transaction = try #require(played.purchases[id])
                    transaction.appUserID = customers[random.next(4)]
                    try await record(transaction, transfers: true)
                }
                if dayIndex == 20 {
                    _ = try await store.alias(
                        bundleID: Fixture.bundleID, anonymousID: Self.anonymous, to: "erin", transfersOwnership: false,
                        at: LedgerTime.date(now))
                }
                if dayIndex % 10 == 9 {
                    let (held, expected) = (try await Self.held(store), try await Self.fromScratch(store, played))
                    #expect(held == expected)
                }
            }
            let (held, expected) = (try await Self.held(store), try await Self.fromScratch(store, played))
            #expect(held == expected)
            #expect(held.cohorts.keys.contains { $0.kind == MetricCohortKind.customerRevenue.rawValue && $0.offset == 1 })
            #expect(played.shares.values.contains { $0 < RecordedTransaction.wholeShare })
        }
    }

    @Test(
        "a write appends its rollup changes and leaves the shared rollup rows alone; the job folds them in batches, each once",
        arguments: StoreKind.allCases)
    func changesFolded(kind: StoreKind) async throws {
        try await withLedgerStore(kind) { store in
            var played = Played()
            for index in 0..<30 {
                let transaction = Self.purchase(
                    "c\(index)", user: ["alice", "bob", "carol"][index % 3], kind: index % 4,
                    at: Self.start + Int64(index % 3) * Self.day)
                try await played.record(transaction, in: store)
            }
            let engine = try #require(store as? any StatementEngine)
            #expect(try await engine.value("SELECT COUNT(*) AS value FROM metric_days", as: Int.self) == 0)
            #expect(try await engine.value("SELECT COUNT(*) AS value FROM metric_cohorts", as: Int.self) == 0)
            let appended = try await Self.changeRows(store)
            #expect(appended >= 30)
            // A step allowed one purchase folds up to this many change rows of each kind.
            let perStep = MetricStatements.changesPerPurchase
            var (steps, folded) = (0, 0)
            while case let done = try await store.updateMetrics(limit: 1), done > 0 {
                #expect(done <= 2 * perStep)
                steps += 1
                folded += done
            }
            #expect(folded == appended)
            #expect(steps >= appended / (2 * perStep))
            #expect(steps > 1)
            #expect(try await Self.changeRows(store) == 0)
            let (held, expected) = (try await Self.held(store), try await Self.fromScratch(store, played))
            #expect(held == expected)
            #expect(!held.cohorts.isEmpty)
        }
    }

    @Test(
        "a first payment moving to a purchase of the same day, product, storefront and currency is decided without the customer's other purchases")
    func firstPaymentMovesAlike() throws {
        let first = MetricFirstPayment(instant: Self.start, productID: "coins100", storefront: "JPN", currency: "JPY")
        let record = MetricUnitRecord(
            contributions: MetricContributions(), firstPayment: first,
            monthlyNet: [MetricUnit.MonthlyNet(month: MetricMath.month(Self.start), currency: "JPY", amount: 118_800)])
        let alice = MetricsUpdate.CustomerKey(bundleID: Fixture.bundleID, environment: "Sandbox", customer: "alice")
        var update = MetricsUpdate()
        update.setChanges([alice: [MetricsUpdate.PurchaseChange(purchase: "q4", old: nil, new: record)]])
        let decided = update.update(customer: alice, stored: MetricCustomerState(first: first, purchase: "q7"))
        #expect(decided != nil)
        #expect(decided??.purchase == "q4")
        // Another day is another base: the customer is worked out again.
        var later = first
        later.instant += Self.day
        var other = MetricsUpdate()
        other.setChanges([alice: [MetricsUpdate.PurchaseChange(purchase: "q4", old: nil, new: record)]])
        #expect(other.update(customer: alice, stored: MetricCustomerState(first: later, purchase: "q7")) == nil)
    }

    /// How many rollup changes the writes appended that the job has not folded yet.
    static func changeRows(_ store: any LedgerStore) async throws -> Int {
        let engine = try #require(store as? any StatementEngine)
        return try await engine.value(
            "SELECT (SELECT COUNT(*) FROM metric_day_changes) + (SELECT COUNT(*) FROM metric_cohort_changes) AS value",
            as: Int.self) ?? 0
    }

    /// One step of the metrics job as it worked before purchases other than subscriptions were
    /// kept in their writes.
    static func earlierJobStep(_ store: any LedgerStore, limit: Int) async throws -> Int {
        let engine = try #require(store as? any StatementEngine)
        return try await engine.perform(for: nil, MetricStatements.step(limit: limit, settled: false))
    }

    @Test(
        "a ledger whose job kept every kind of purchase, part worked out and part still marked, keeps the same figures after migrating, and on",
        arguments: StoreKind.allCases)
    func earlierLedger(kind: StoreKind) async throws {
        try await withLedgerStore(kind) { store in
            var played = Played()
            func record(_ transaction: RecordedTransaction, transfers: Bool = false) async throws {
                try await played.record(transaction, in: store, transfers: transfers)
            }
            for index in 0..<12 {
                try await record(
                    Self.purchase(
                        "e\(index)", user: ["alice", "bob", "carol"][index % 3], kind: index % 4,
                        at: Self.start + Int64(index) * 2 * Self.day))
            }
            try await record(
                SubscriptionMetricsTests.subscription("s0", original: "s0", user: "bob", from: Self.start + Self.day, days: 30))
            // The ledger as the earlier job left it: its rollups and records made by the job, which
            // had worked out some purchases and had the others still to do.
            for table in [
                "metric_days", "metric_cohorts", "metric_customers", "metric_units", "metric_runs", "metric_pending",
                "metric_day_changes", "metric_cohort_changes",
            ] {
                try await RawSQL.execute(store, "DELETE FROM \(table)")
            }
            try await RawSQL.execute(
                store,
                "INSERT INTO metric_pending (bundle_id, original_transaction_id) SELECT DISTINCT bundle_id, original_transaction_id FROM transactions")
            try await RawSQL.execute(
                store, "UPDATE ledger_backfills SET finished_at = NULL WHERE name = '\(PurchaseMetricChanges.settlePass)'")
            #expect(try await Self.earlierJobStep(store, limit: 6) == 6)

            try await store.migrate()
            var (held, expected) = (try await Self.held(store), try await Self.fromScratch(store, played))
            #expect(held == expected)
            #expect(held.days.values.contains { $0[.newCustomers] > 0 })

            // Then kept by the writes: a refund, a purchase paid before alice's first, a move.
            #expect(try await store.revoke(transactionID: "e0", at: LedgerTime.date(Self.start + 40 * Self.day), reason: 1, policy: .clampAtZero))
            played.revoked.insert("e0")
            try await record(Self.purchase("early", user: "alice", kind: 1, at: Self.start - 40 * Self.day))
            var moved = try #require(played.purchases["e2"])
            moved.appUserID = "dave"
            try await record(moved, transfers: true)
            (held, expected) = (try await Self.held(store), try await Self.fromScratch(store, played))
            #expect(held == expected)
            // Migrating again changes nothing.
            try await store.migrate()
            #expect(try await Self.held(store) == expected)
        }
    }
}

extension PurchaseMetricsTests.Generator: RandomNumberGenerator {
    mutating func next() -> UInt64 {
        UInt64(next(Int.max)) << 1 ^ UInt64(next(Int.max))
    }
}
