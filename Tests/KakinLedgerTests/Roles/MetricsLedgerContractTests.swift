import AppStoreModels
import Foundation
import KakinTestSupport
import Testing

@testable import KakinLedger

/// The contract of ``MetricsLedger``, run against every engine and the in-memory implementation:
/// the daily figures kept with each write, and the subscription metrics the job keeps, as the
/// purchases recorded through the other roles add up to.
@Suite("Ledger role: metrics and figures")
struct MetricsLedgerContractTests {
    // MARK: Daily figures

    static let day = 86_400.0
    /// The day of `Fixture.epoch`.
    static let firstDay = DailyFigures.day(of: Fixture.epoch)

    /// The app's figures summed per day (all products, currencies and environments), days from
    /// `Fixture.epoch`'s.
    static func totals(
        _ ledger: any MetricsLedger, days: Int = 60, now: TimeInterval = 0
    ) async throws -> (
        period: DailyFiguresPeriod, byDay: [Int: FigureTotals]
    ) {
        let period = try await ledger.dailyFigures(
            bundleID: Fixture.bundleID, days: firstDay..<(firstDay + days), now: Fixture.at(now))
        var byDay: [Int: FigureTotals] = [:]
        for figures in period.figures {
            byDay[figures.day - firstDay, default: FigureTotals()].add(figures)
        }
        // A row whose figures moved to another day stays, with zeros.
        return (period, byDay.filter { $0.value != FigureTotals() })
    }

    struct FigureTotals: Equatable {
        var purchases = 0
        var refunds = 0
        var revenue: [String: Int64] = [:]
        var starts = 0
        var ends = 0

        mutating func add(_ figures: DailyFigures) {
            purchases += figures.purchases
            refunds += figures.refunds
            if let currency = figures.currency, figures.revenue != 0 {
                revenue[currency, default: 0] += figures.revenue
            }
            starts += figures.subscriptionStarts
            ends += figures.subscriptionEnds
        }
    }

    static func priced(_ transaction: RecordedTransaction, _ price: Int64, _ currency: String) -> RecordedTransaction {
        var transaction = transaction
        transaction.price = price
        transaction.currency = currency
        return transaction
    }

    @Test(
        "a first record counts once; the same transaction again, or its owner named later, changes nothing",
        arguments: RoleImplementation.all)
    func recordOnce(_ implementation: RoleImplementation) async throws {
        try await implementation.withMetrics { ledger in
            let coins = Self.priced(Fixture.transaction("c1", user: nil, quantity: 3, purchasedAt: 3600), 990, "EUR")
            let monthly = Self.priced(
                Fixture.transaction(
                    "s1", user: "alice", product: "monthly", type: .autoRenewableSubscription,
                    purchasedAt: 2 * Self.day), 4990, "USD")
            for _ in 0..<2 {
                _ = try await ledger.record(coins, grants: Fixture.coins)
                _ = try await ledger.record(monthly, grants: [])
            }
            var owned = coins
            owned.appUserID = "bob"
            #expect(try await ledger.record(owned, grants: Fixture.coins) == .duplicate(ownerAssigned: true))
            // An ingest in a group with others, asking for a summary.
            var again = LedgerIngest(monthly, grants: [])
            again.summary = (recent: 1, withJWS: false)
            _ = try await ledger.ingest(again)

            let (period, byDay) = try await Self.totals(ledger)
            #expect(byDay[0] == FigureTotals(purchases: 1, revenue: ["EUR": 2970]))
            #expect(byDay[2] == FigureTotals(purchases: 1, revenue: ["USD": 4990], starts: 1))
            #expect(byDay[32] == FigureTotals(ends: 1))
            #expect(byDay.count == 3)
            #expect(period.subscriptionsActiveBefore == 0)
            let products = Set(period.figures.map(\.productID))
            #expect(products == ["coins100", "monthly"])
        }
    }

    @Test(
        "a revocation counts a refund once and moves a subscription's end; a larger refund later moves them again",
        arguments: RoleImplementation.all)
    func revocations(_ implementation: RoleImplementation) async throws {
        try await implementation.withMetrics { ledger in
            let monthly = Fixture.transaction(
                "s1", user: "alice", product: "monthly", type: .autoRenewableSubscription, purchasedAt: 1000)
            _ = try await ledger.record(monthly, grants: [])
            #expect(
                try await ledger.revoke(
                    transactionID: "s1", at: Fixture.at(5 * Self.day), reason: 1, policy: .clampAtZero))
            // The same revocation again changes nothing.
            #expect(
                try await !ledger.revoke(
                    transactionID: "s1", at: Fixture.at(6 * Self.day), reason: 1, policy: .clampAtZero))
            var byDay = try await Self.totals(ledger).byDay
            #expect(byDay[0] == FigureTotals(purchases: 1, starts: 1))
            #expect(byDay[5] == FigureTotals(refunds: 1, ends: 1))
            #expect(byDay[30] == nil)

            // A prorated refund, then a larger one on a later day: one refund, on the later day.
            _ = try await ledger.record(
                Fixture.transaction("c1", user: "bob", purchasedAt: 2000), grants: Fixture.coins)
            #expect(
                try await ledger.revoke(
                    transactionID: "c1", at: Fixture.at(7 * Self.day), reason: 1, share: 30_000, policy: .clampAtZero))
            #expect(
                try await ledger.revoke(
                    transactionID: "c1", at: Fixture.at(9 * Self.day), reason: 1, share: 60_000, policy: .clampAtZero))
            #expect(
                try await !ledger.revoke(
                    transactionID: "c1", at: Fixture.at(10 * Self.day), reason: 1, share: 60_000, policy: .clampAtZero))
            byDay = try await Self.totals(ledger).byDay
            #expect(byDay[0] == FigureTotals(purchases: 2, starts: 1))
            #expect(byDay[7] == nil)
            #expect(byDay[9] == FigureTotals(refunds: 1))
            #expect(byDay.values.map(\.refunds).reduce(0, +) == 2)

            // A transaction recorded revoked counts its refund with its purchase, once.
            let refunded = Fixture.transaction("c2", user: "bob", purchasedAt: 3000, revokedAt: 11 * Self.day)
            _ = try await ledger.record(refunded, grants: Fixture.coins)
            _ = try await ledger.ingest(LedgerIngest(refunded, grants: Fixture.coins, clawbackPolicy: .clampAtZero))
            byDay = try await Self.totals(ledger).byDay
            #expect(byDay[0]?.purchases == 3)
            #expect(byDay[11] == FigureTotals(refunds: 1))
        }
    }

    @Test("active subscriptions: before the period, per day, and now", arguments: RoleImplementation.all)
    func activeSubscriptions(_ implementation: RoleImplementation) async throws {
        try await implementation.withMetrics { ledger in
            // Three subscriptions of 30 days: from day 0 (revoked on day 10), day 1 and day 2.
            for (index, start) in [0.0, 1, 2].enumerated() {
                _ = try await ledger.record(
                    Fixture.transaction(
                        "s\(index)", user: "u\(index)", product: "monthly", type: .autoRenewableSubscription,
                        purchasedAt: start * Self.day),
                    grants: [])
            }
            _ = try await ledger.revoke(
                transactionID: "s0", at: Fixture.at(10 * Self.day), reason: 1, policy: .clampAtZero)
            let period = try await ledger.dailyFigures(
                bundleID: Fixture.bundleID, days: (Self.firstDay + 5)..<(Self.firstDay + 40),
                now: Fixture.at(31 * Self.day - 60))
            #expect(period.subscriptionsActiveBefore == 3)
            // Now is a minute before the subscription bought on day 1 ends (day 31), later that day.
            #expect(period.subscriptionsActiveNow == 2)
            let later = try await ledger.dailyFigures(
                bundleID: Fixture.bundleID, days: (Self.firstDay + 5)..<(Self.firstDay + 40),
                now: Fixture.at(31 * Self.day + 60))
            #expect(later.subscriptionsActiveNow == 1)
        }
    }

    // MARK: Subscription metrics

    /// The figures summed over every product, storefront and currency, by day from the first of
    /// the subscription fixtures (``SubscriptionMetricsTests/firstDay``), and the running count of
    /// active paid subscriptions at the end of each day.
    static func read(
        _ ledger: any MetricsLedger, days: Int = 120, now: Int64
    ) async throws -> (
        byDay: [Int: MetricCounts], activePaid: [Int], reading: MetricsReading
    ) {
        let firstDay = SubscriptionMetricsTests.firstDay
        while try await ledger.updateMetrics(limit: 7) > 0 {}
        let reading = try await ledger.metrics(
            bundleID: Fixture.bundleID, environment: .sandbox, days: firstDay...(firstDay + days - 1),
            now: LedgerTime.date(now))
        var byDay: [Int: MetricCounts] = [:]
        for row in reading.days {
            byDay[row.day - firstDay] = (byDay[row.day - firstDay] ?? MetricCounts()) + row.counts
        }
        var active = reading.before.reduce(Int64(0)) { $0 + $1.counts[.paidStarts] - $1.counts[.paidEnds] }
        var activePaid: [Int] = []
        for day in 0..<days {
            active += (byDay[day]?[.paidStarts] ?? 0) - (byDay[day]?[.paidEnds] ?? 0)
            activePaid.append(Int(active))
        }
        return (byDay.filter { !$0.value.isZero }, activePaid, reading)
    }

    @Test(
        "the job keeps the rollups: once per change, again after a revocation, nothing twice",
        arguments: RoleImplementation.all)
    func job(_ implementation: RoleImplementation) async throws {
        try await implementation.withMetrics { ledger in
            let (start, day) = (SubscriptionMetricsTests.start, SubscriptionMetricsTests.day)
            let now = start + 100 * day
            let alice = [
                SubscriptionMetricsTests.subscription(
                    "a0", original: "a0", user: "alice", from: start, days: 7, trial: true),
                SubscriptionMetricsTests.subscription(
                    "a1", original: "a0", user: "alice", from: start + 7 * day, days: 30),
                SubscriptionMetricsTests.subscription(
                    "a2", original: "a0", user: "alice", from: start + 37 * day, days: 30),
            ]
            let bob = [
                SubscriptionMetricsTests.subscription(
                    "b0", original: "b0", user: "bob", from: start + 2 * day, days: 30, price: 1_200_000,
                    currency: "JPY", storefront: "JPN")
            ]
            let carolTrial = SubscriptionMetricsTests.subscription(
                "c0", original: "c0", user: "carol", from: now - 2 * day, days: 7, trial: true)
            let family = SubscriptionMetricsTests.subscription(
                "f0", original: "f0", user: "erin", from: start + 3 * day, days: 30, family: true)
            for transaction in alice + bob + [carolTrial, family] {
                _ = try await ledger.record(transaction, grants: [])
            }
            _ = try await ledger.record(
                Fixture.transaction("coins", user: "bob", purchasedAt: 0), grants: Fixture.coins)

            var (byDay, activePaid, reading) = try await Self.read(ledger, now: now)
            #expect(activePaid[1] == 0)
            #expect(activePaid[2] == 1)  // bob
            #expect(activePaid[7] == 2)  // alice converted
            #expect(activePaid[32] == 1)  // bob lapsed at the start of day 32
            #expect(activePaid[66] == 1 && activePaid[67] == 0)
            #expect(byDay[0]?[.trialsStarted] == 1 && byDay[0]?[.trialsConverted] == 1)
            #expect(byDay[3]?[.familyStarts] == 1 && byDay[3]?[.revenue] == 0)
            #expect(byDay[7]?[.newCustomers] == 1 && byDay[2]?[.newCustomers] == 1)
            #expect(byDay[98]?[.trialsStarted] == 1)
            #expect(
                reading.pendingTrials == [
                    MetricCount(
                        day: SubscriptionMetricsTests.firstDay + 98, productID: "monthly", storefront: "USA", count: 1)
                ])
            let revenue = reading.days.filter { $0.counts[.revenue] != 0 }.map {
                "\($0.storefront) \($0.currency) \($0.counts[.revenue])"
            }
            #expect(Set(revenue) == ["USA USD 9990", "JPN JPY 1200000"])
            #expect(
                reading.cohorts.contains(
                    MetricCohortValue(
                        kind: .customers, cohort: MetricMath.month(start), offset: 0, currency: "", value: 2)))

            // Churn: bob's period ended on day 32 (he was active before the period started).
            let periods = [
                MetricPeriod(start: LedgerTime.date(start + 30 * day), end: LedgerTime.date(start + 40 * day)),
                MetricPeriod(start: LedgerTime.date(start + 60 * day), end: LedgerTime.date(start + 70 * day)),
                MetricPeriod(start: LedgerTime.date(start + 36 * day), end: LedgerTime.date(start + 38 * day)),
            ]
            let churned = try await ledger.churnedSubscriptions(
                bundleID: Fixture.bundleID, environment: .sandbox, periods: periods)
            #expect(churned.map { $0.map(\.count).reduce(0, +) } == [1, 1, 0])
            #expect(churned[0] == [MetricCount(productID: "monthly", storefront: "JPN", count: 1)])

            // Nothing changed: marking every purchase again changes no figure.
            let before = reading
            for transaction in alice + bob { _ = try await ledger.record(transaction, grants: []) }
            #expect(try await Self.read(ledger, now: now).reading == before)

            // A revocation of alice's second period ends her subscription on day 40.
            #expect(
                try await ledger.revoke(
                    transactionID: "a2", at: LedgerTime.date(start + 40 * day), reason: 0, policy: .clampAtZero))
            (byDay, activePaid, reading) = try await Self.read(ledger, now: now)
            #expect(activePaid[39] == 1 && activePaid[40] == 0)
            #expect(byDay[40]?[.refunds] == 1 && byDay[40]?[.refunded] == 9_990)
            #expect(reading.days.map(\.counts[.refunds]).reduce(0, +) == 1)
        }
    }

    @Test("a grace period Apple reports is kept and marks its subscription", arguments: RoleImplementation.all)
    func graceRecorded(_ implementation: RoleImplementation) async throws {
        try await implementation.withMetrics { ledger in
            let (start, day) = (SubscriptionMetricsTests.start, SubscriptionMetricsTests.day)
            _ = try await ledger.record(
                SubscriptionMetricsTests.subscription("g1", original: "g1", user: "bob", from: start, days: 30),
                grants: [])
            var (_, activePaid, _) = try await Self.read(ledger, now: start + 60 * day)
            #expect(activePaid[30] == 0)
            let renewal = SubscriptionRenewal(
                bundleID: Fixture.bundleID, originalTransactionID: "g1", autoRenewStatus: .on, expirationIntent: nil,
                billingIssueDetectedAt: LedgerTime.date(start + 30 * day),
                gracePeriodExpiresAt: LedgerTime.date(start + 46 * day),
                signedDate: LedgerTime.date(start + 30 * day), notificationUUID: "n1",
                updatedAt: LedgerTime.date(start + 30 * day))
            _ = try await ledger.recordRenewal(renewal)
            _ = try await ledger.recordRenewal(renewal)
            (_, activePaid, _) = try await Self.read(ledger, now: start + 60 * day)
            #expect(activePaid[30] == 1 && activePaid[45] == 1 && activePaid[46] == 0)
            // A later report that names the period whose renewal failed: the grace period is kept once.
            var named = renewal
            named.periodExpiresAt = LedgerTime.date(start + 30 * day)
            named.signedDate = LedgerTime.date(start + 31 * day)
            _ = try await ledger.recordRenewal(named)
            (_, activePaid, _) = try await Self.read(ledger, now: start + 60 * day)
            #expect(activePaid[30] == 1 && activePaid[45] == 1 && activePaid[46] == 0)
        }
    }

    // MARK: Metrics of purchases kept in their writes

    @Test(
        "a first payment moving to a purchase of the same day, product, storefront and currency reads as from scratch",
        arguments: RoleImplementation.all)
    func firstPaymentMovesAlike(_ implementation: RoleImplementation) async throws {
        // The same instant, product and storefront ("q1", "q4" and "q7" are all bought in Japan),
        // recorded in the reverse order of their IDs: each moves alice's first payment to itself.
        try await implementation.withMetrics { ledger in
            var played = PurchaseMetricsTests.Played()
            for id in ["q7", "q4", "q1"] {
                try await played.record(
                    PurchaseMetricsTests.purchase(id, user: "alice", kind: 0, at: PurchaseMetricsTests.start),
                    in: ledger)
            }
            let (held, expected) = (
                try await PurchaseMetricsTests.held(ledger), try await PurchaseMetricsTests.fromScratch(ledger, played)
            )
            #expect(held == expected)
            #expect(held.cohorts.values.contains(3 * 118_800))
        }
    }
}
