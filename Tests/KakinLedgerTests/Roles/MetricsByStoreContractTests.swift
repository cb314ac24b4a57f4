import AppStoreModels
import Foundation
import KakinCore
import KakinTestSupport
import Testing

@testable import KakinLedger

/// The figures and the metrics' rollups kept per store, on every engine and in memory: a month of
/// App Store and web sales of the same products (``StoreMonth``), read back by store and in
/// total, against what the sales add up to.
@Suite("Ledger role: figures and metrics by store")
struct MetricsByStoreContractTests {
    static let stores: [PurchaseStore?] = [.appStore, .stripe, nil]

    /// What the daily figures of `store` (both stores' with `nil`) add up to over the month.
    static func figures(_ period: DailyFiguresPeriod, _ store: PurchaseStore?) -> StoreMonth.Totals {
        var totals = StoreMonth.Totals()
        for figures in period.figures where store == nil || figures.store == store {
            totals.purchases += figures.purchases
            totals.refunds += figures.refunds
            if let currency = figures.currency, figures.revenue != 0 {
                totals.revenue[currency, default: 0] += figures.revenue
            }
        }
        return totals
    }

    @Test("the daily figures of a month of App Store and web sales, by store and in total", arguments: RoleImplementation.all)
    func dailyFigures(_ implementation: RoleImplementation) async throws {
        try await implementation.withMetrics { ledger in
            try await StoreMonth.record(in: ledger)
            // Read at noon on day 21, the month's days.
            let now = StoreMonth.start + 21 * StoreMonth.dayLength + 43_200_000
            let period = try await ledger.dailyFigures(
                bundleID: Fixture.bundleID, days: StoreMonth.firstDay..<(StoreMonth.firstDay + StoreMonth.days),
                now: LedgerTime.date(now))
            for store in Self.stores {
                let expected = StoreMonth.expected(store)
                let found = Self.figures(period, store)
                #expect(found.purchases == expected.purchases, "\(String(describing: store))")
                #expect(found.refunds == expected.refunds, "\(String(describing: store))")
                #expect(found.revenue == expected.revenue, "\(String(describing: store))")
            }
            // Rows of both stores for the same product and day stay apart.
            let dayTwo = period.figures.filter { $0.day == StoreMonth.firstDay + 2 && $0.productID == "monthly" }
            #expect(Set(dayTwo.map(\.store)) == [.appStore, .stripe])
            // Active now: nothing starts or ends later on day 21.
            let activeNow = StoreMonth.sales.filter { $0.active(atEndOf: 21) }
            #expect(activeNow.count == StoreMonth.expected(nil).active[21])
            #expect(period.subscriptionsActiveNow == activeNow.count)
            #expect(
                period.subscriptionsActiveNowByStore
                    == Dictionary(grouping: activeNow, by: \.store).mapValues(\.count))
            #expect(period.subscriptionsActiveBefore == 0 && period.subscriptionsActiveBeforeByStore.isEmpty)

            // A period that starts on day 15: the subscriptions active before it, by store.
            let later = try await ledger.dailyFigures(
                bundleID: Fixture.bundleID, days: (StoreMonth.firstDay + 15)..<(StoreMonth.firstDay + 30),
                now: LedgerTime.date(now))
            let before = StoreMonth.sales.filter { $0.active(atEndOf: 14) }
            #expect(later.subscriptionsActiveBefore == before.count)
            #expect(later.subscriptionsActiveBeforeByStore == Dictionary(grouping: before, by: \.store).mapValues(\.count))
        }
    }

    @Test("the metrics' rollups of a month of App Store and web sales, by store and in total", arguments: RoleImplementation.all)
    func rollups(_ implementation: RoleImplementation) async throws {
        try await implementation.withMetrics { ledger in
            try await StoreMonth.record(in: ledger)
            while try await ledger.updateMetrics(limit: 3) > 0 {}
            let firstDay = StoreMonth.firstDay
            let reading = try await ledger.metrics(
                bundleID: Fixture.bundleID, environment: .sandbox, days: firstDay...(firstDay + StoreMonth.days - 1),
                now: LedgerTime.date(StoreMonth.start + 40 * StoreMonth.dayLength))
            #expect(reading.before.isEmpty)
            for store in Self.stores {
                let expected = StoreMonth.expected(store)
                let rows = reading.days.filter { store == nil || $0.store == store }
                var found = StoreMonth.Totals()
                var changes = Array(repeating: Int64(0), count: StoreMonth.days)
                for row in rows {
                    found.purchases += Int(row.counts[.purchases])
                    found.refunds += Int(row.counts[.refunds])
                    found.newCustomers += Int(row.counts[.newCustomers])
                    if row.counts[.revenue] != 0 { found.revenue[row.currency, default: 0] += row.counts[.revenue] }
                    if row.counts[.refunded] != 0 { found.refunded[row.currency, default: 0] += row.counts[.refunded] }
                    changes[row.day - firstDay] += row.counts[.paidStarts] - row.counts[.paidEnds]
                }
                var active = 0
                found.active = changes.map { change in
                    active += Int(change)
                    return active
                }
                let name = String(describing: store)
                #expect(found.purchases == expected.purchases, "\(name)")
                #expect(found.refunds == expected.refunds, "\(name)")
                #expect(found.revenue == expected.revenue, "\(name)")
                #expect(found.refunded == expected.refunded, "\(name)")
                #expect(found.active == expected.active, "\(name)")
                #expect(found.newCustomers == expected.newCustomers, "\(name)")
            }
            // A web sale has no storefront: it counts under the unknown one.
            #expect(reading.days.filter { $0.store == .stripe }.allSatisfy { $0.storefront.isEmpty })
            #expect(reading.days.filter { $0.store == .appStore }.allSatisfy { $0.storefront == "USA" })

            // Churn: the web subscription refunded on day 20 ended in the month's last ten days.
            let period = MetricPeriod(
                start: LedgerTime.date(StoreMonth.start + 15 * StoreMonth.dayLength),
                end: LedgerTime.date(StoreMonth.start + 30 * StoreMonth.dayLength))
            let churned = try await ledger.churnedSubscriptions(
                bundleID: Fixture.bundleID, environment: .sandbox, periods: [period])
            #expect(churned == [[MetricCount(productID: "monthly", storefront: "", store: .stripe, count: 1)]])
        }
    }
}
