import AppStoreModels
import Foundation
import KakinCore
import KakinTestSupport
import Testing

@testable import KakinDashboard
@testable import KakinLedger

/// The overview built from the figures kept with each write shows what computing it from the
/// transactions themselves shows.
@Suite("Dashboard: the overview from the daily figures")
struct DashboardOverviewTests {
    static let day = 86_400.0
    static let days = DashboardRoutes.overviewDays

    /// The overview as it was computed from every transaction touching the period: the reference
    /// the figures must agree with. A subscription is active at a day's end (the moment read, for
    /// today) while bought at or before it, not expired and not revoked by then.
    struct Reference {
        var purchases = 0
        var refunds = 0
        var revenue: [String: [Double]] = [:]
        var activeSubscriptions: [Int]
        var activeNow: Int

        init(transactions: [RecordedTransaction], start: Date, days: Int, now: Date) {
            let end = start.addingTimeInterval(Double(days) * 86_400)
            var active = [Set<String>](repeating: [], count: days)
            var activeNow: Set<String> = []
            for transaction in transactions where transaction.purchaseDate < end {
                if transaction.purchaseDate >= start {
                    purchases += 1
                    let day = Int(transaction.purchaseDate.timeIntervalSince(start) / 86_400)
                    if let price = transaction.price, let currency = transaction.currency {
                        revenue[currency, default: [Double](repeating: 0, count: days)][day] +=
                            Double(price) / 1000 * Double(transaction.quantity)
                    }
                }
                if let revoked = transaction.revocationDate, revoked >= start, revoked < end { refunds += 1 }
                guard transaction.productType == .autoRenewableSubscription, let expires = transaction.expiresDate else {
                    continue
                }
                for day in 0..<days {
                    let moment = min(start.addingTimeInterval(Double(day + 1) * 86_400), now)
                    guard transaction.purchaseDate <= moment, expires > moment else { continue }
                    if let revoked = transaction.revocationDate, revoked <= moment { continue }
                    active[day].insert(transaction.originalTransactionID)
                }
                if transaction.purchaseDate <= now, expires > now, transaction.revocationDate == nil {
                    activeNow.insert(transaction.originalTransactionID)
                }
            }
            activeSubscriptions = active.map(\.count)
            self.activeNow = activeNow.count
        }
    }

    /// A small deterministic generator, so a failure shows the same ledger again.
    struct Generator {
        var state: UInt64
        mutating func next(_ bound: Int) -> Int {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Int((state >> 33) % UInt64(bound))
        }
    }

    @Test("purchases, refunds, revenue and active subscriptions agree with the transactions", arguments: StoreKind.backends)
    func agreesWithTheTransactions(kind: StoreKind) async throws {
        try await withLedgerStore(kind) { store in
            // Instants never on a midnight: whole seconds plus 123 ms.
            let now = Fixture.at(50 * Self.day + 13 * 3600 + 0.123)
            func instant(daysAgo: Int, _ generator: inout Generator) -> Date {
                now.addingTimeInterval(-Double(daysAgo) * Self.day - Double(generator.next(80_000)))
            }
            var generator = Generator(state: 42)
            var transactions: [String: RecordedTransaction] = [:]
            var revocations: [(id: String, at: Date, share: Int)] = []
            for index in 0..<120 {
                let purchased = instant(daysAgo: generator.next(45), &generator)
                let currency = ["EUR", "USD", nil][generator.next(3)]
                let price = currency == nil ? nil : Int64(490 + generator.next(5) * 500)
                if generator.next(2) == 0 {
                    var coins = Fixture.transaction(
                        "c\(index)", user: "u\(generator.next(30))", quantity: 1 + generator.next(3), purchasedAt: 0)
                    coins.purchaseDate = purchased
                    (coins.price, coins.currency) = (price, currency)
                    transactions[coins.transactionID] = coins
                } else {
                    // A subscription and its renewals, each starting when the one before expires.
                    var start = purchased
                    for renewal in 0..<(1 + generator.next(3)) {
                        guard start <= now else { break }
                        let length = Double(3 + generator.next(10)) * Self.day
                        var period = Fixture.transaction(
                            "s\(index)-\(renewal)", original: "s\(index)-0", user: "u\(generator.next(30))",
                            product: "monthly", type: .autoRenewableSubscription, purchasedAt: 0)
                        period.purchaseDate = start
                        period.expiresDate = start.addingTimeInterval(length)
                        (period.price, period.currency) = (price, currency)
                        transactions[period.transactionID] = period
                        start = start.addingTimeInterval(length)
                    }
                }
            }
            for id in transactions.keys.sorted() where generator.next(5) == 0 {
                guard let bought = transactions[id]?.purchaseDate else { continue }
                let span = max(Int(now.timeIntervalSince(bought)) - 1, 1)
                let first = bought.addingTimeInterval(Double(1 + generator.next(span)))
                if generator.next(2) == 0 {
                    revocations.append((id, first, RecordedTransaction.wholeShare))
                } else {
                    // A prorated refund, then a larger one later.
                    let later = first.addingTimeInterval(Double(generator.next(max(Int(now.timeIntervalSince(first)), 1))))
                    revocations += [(id, first, 30_000), (id, later, 70_000)]
                }
            }
            for id in transactions.keys.sorted() {
                _ = try await store.record(try #require(transactions[id]), grants: [])
            }
            for revocation in revocations {
                if try await store.revoke(
                    transactionID: revocation.id, at: revocation.at, reason: 1, share: revocation.share,
                    policy: .clampAtZero)
                {
                    transactions[revocation.id]?.revocationDate = revocation.at
                }
            }

            let today = DailyFigures.day(of: now)
            let first = today - (Self.days - 1)
            let period = try await store.dailyFigures(bundleID: Fixture.bundleID, days: first..<(today + 1), now: now)
            let overview = DashboardOverview(period: period, firstDay: first, days: Self.days, today: today)
            let reference = Reference(
                transactions: Array(transactions.values), start: DailyFigures.start(ofDay: first), days: Self.days,
                now: now)
            #expect(overview.purchases == reference.purchases)
            #expect(overview.refunds == reference.refunds)
            #expect(overview.activeSubscriptions == reference.activeSubscriptions)
            #expect(overview.activeNow == reference.activeNow)
            #expect(Set(overview.revenue.keys) == Set(reference.revenue.keys))
            for (currency, amounts) in reference.revenue {
                let figures = overview.revenue[currency] ?? []
                #expect(figures.count == amounts.count)
                for (figure, amount) in zip(figures, amounts) { #expect(abs(figure - amount) < 0.0001, "\(currency)") }
            }
            #expect(reference.purchases > 50 && reference.refunds > 5 && reference.activeNow > 5)
        }
    }

    @Test("an app with web sales has its figures split by store; one without has no split")
    func splitByStore() {
        let first = 20_000
        let figures = [
            DailyFigures(
                day: first, productID: "coins100", currency: "USD", environment: .sandbox, store: .appStore,
                purchases: 2, refunds: 1, revenue: 1_980),
            DailyFigures(
                day: first + 1, productID: "coins100", currency: "USD", environment: .sandbox, store: .stripe,
                purchases: 1, revenue: 1_000),
            DailyFigures(
                day: first + 1, productID: "monthly", currency: "EUR", environment: .sandbox, store: .stripe,
                purchases: 1, revenue: 8_500, subscriptionStarts: 1),
        ]
        let period = DailyFiguresPeriod(
            figures: figures, subscriptionsActiveBefore: 1, subscriptionsActiveNow: 2,
            subscriptionsActiveBeforeByStore: [.appStore: 1], subscriptionsActiveNowByStore: [.appStore: 1, .stripe: 1])
        let app = DashboardOverview(period: period, firstDay: first, days: 3, today: first + 2).view(bundleID: "app")
        #expect(app.purchases == 4 && app.activeSubscriptions == 2)
        #expect(app.hasStores)
        #expect(app.stores.map(\.store) == ["appStore", "stripe"])
        #expect(app.stores.map(\.purchases) == [2, 2] && app.stores.map(\.refunds) == [1, 0])
        #expect(app.stores.map(\.activeSubscriptions) == [1, 1])
        #expect(app.stores.map(\.revenue) == ["1.98 USD", "8.50 EUR, 1.00 USD"])

        let appStoreOnly = DashboardOverview(
            period: DailyFiguresPeriod(figures: [figures[0]], subscriptionsActiveBefore: 0, subscriptionsActiveNow: 0),
            firstDay: first, days: 3, today: first + 2
        ).view(bundleID: "app")
        #expect(!appStoreOnly.hasStores && appStoreOnly.stores.isEmpty)
    }
}
