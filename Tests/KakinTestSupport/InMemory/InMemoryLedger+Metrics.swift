import AppStoreModels
import Foundation
import KakinCore

@testable import KakinLedger

/// A purchase as the metrics read it: the transactions of one app's original transaction ID, and
/// the grace periods Apple reported for it.
struct MetricsPurchase: Equatable, Sendable {
    var rows: [TransactionRow] = []
    var graceExpiries: [MetricGrace] = []
}

/// The daily figures and subscription metrics of ``InMemoryLedger``: ``MetricsLedger`` worked out
/// from scratch on each read, with the arithmetic the engines use, so that what is read is what an
/// engine's tables add up to.
///
/// - The daily figures are what each transaction contributes as it is now (``FigureSource``): an
///   engine keeps them with each write. Rows whose figures came back to zero are left out (an
///   engine keeps them, at zero).
/// - The metrics are read as the job last left them, as on an engine: ``updateMetrics(limit:)``
///   takes the purchases whose transactions or grace periods changed since it last took them,
///   and the reads work the rollups out from the purchases as taken. A subscription is worked
///   out from all its transactions and grace periods (``MetricUnit``); every other transaction
///   contributes on its own, as the writes keep it (``PurchaseMetricChanges``); each customer
///   is worked out from the records of all their purchases (``MetricsUpdate``).
///
/// An engine's job takes the purchases it marked and folds the writes' changes in batches of
/// their own; here every changed purchase counts as one, so the numbers ``updateMetrics(limit:)``
/// answers are not an engine's, but what is read once it answers zero is.
extension InMemoryLedger {
    // MARK: Daily figures

    public func dailyFigures(bundleID: String, days: Range<Int>, now: Date) async throws -> DailyFiguresPeriod {
        var contributions = FigureChanges()
        for row in transactions.values where row.bundleID == bundleID {
            contributions.record(FigureSource(row))
        }
        let today = DailyFigures.day(of: now)
        var (before, through): ([PurchaseStore: Int], [PurchaseStore: Int]) = ([:], [:])
        var figures: [DailyFigures] = []
        for (key, values) in contributions.sorted {
            let store = PurchaseStore(rawValue: key.store) ?? .appStore
            let active = Int(values.subscriptionStarts - values.subscriptionEnds)
            if key.day < days.lowerBound { before[store, default: 0] += active }
            if key.day <= today { through[store, default: 0] += active }
            guard days.contains(key.day) else { continue }
            figures.append(
                DailyFigures(
                    day: key.day, productID: key.productID, currency: key.currency.isEmpty ? nil : key.currency,
                    environment: AppStoreEnvironment(rawValue: key.environment), store: store,
                    purchases: Int(values.purchases), refunds: Int(values.refunds), revenue: values.revenue,
                    subscriptionStarts: Int(values.subscriptionStarts), subscriptionEnds: Int(values.subscriptionEnds)))
        }
        for row in subscriptionsEndingLaterToday(bundleID: bundleID, now: now) {
            through[PurchaseStore(rawValue: row.store) ?? .appStore, default: 0] += 1
        }
        (before, through) = (before.filter { $0.value != 0 }, through.filter { $0.value != 0 })
        return DailyFiguresPeriod(
            figures: figures, subscriptionsActiveBefore: before.values.reduce(0, +),
            subscriptionsActiveNow: through.values.reduce(0, +), subscriptionsActiveBeforeByStore: before,
            subscriptionsActiveNowByStore: through)
    }

    /// The subscriptions active at `now` whose period ends later on now's day: their ends are
    /// counted on that day already (the engines' count through the index by expiry).
    private func subscriptionsEndingLaterToday(bundleID: String, now: Date) -> [TransactionRow] {
        let moment = LedgerTime.milliseconds(now)
        let tomorrow = (Int64(DailyFigures.day(of: now)) + 1) * DailyFigures.dayLength
        let environments = Set(AppStoreEnvironment.knownValues.map(\.rawValue))
        return transactions.values.filter { row in
            guard let expires = row.expiresDate else { return false }
            return row.bundleID == bundleID && environments.contains(row.environment)
                && row.productType == ProductType.autoRenewableSubscription.rawValue && expires > moment
                && expires < tomorrow && row.revocationDate ?? .max > moment && row.purchaseDate < moment
        }
    }

    // MARK: The job

    /// Takes up to `limit` of the purchases whose transactions or grace periods changed since they
    /// were last taken, in key order; answers how many it took (zero when the metrics are up to date).
    public func updateMetrics(limit: Int) async throws -> Int {
        let current = metricsPurchases()
        let changed = Set(current.keys).union(metricsTaken.keys).filter { current[$0] != metricsTaken[$0] }
        let taken = changed.sorted().prefix(max(limit, 0))
        for key in taken { metricsTaken[key] = current[key] }
        return taken.count
    }

    /// Every purchase as it is now, by app and original transaction ID, its transactions in ID order.
    private func metricsPurchases() -> [MetricsUpdate.UnitKey: MetricsPurchase] {
        var purchases: [MetricsUpdate.UnitKey: MetricsPurchase] = [:]
        for row in transactions.values.sorted(by: { $0.transactionID < $1.transactionID }) {
            let key = MetricsUpdate.UnitKey(bundleID: row.bundleID, originalTransactionID: row.originalTransactionID)
            purchases[key, default: MetricsPurchase()].rows.append(row)
        }
        for (key, grace) in graceExpiries {
            let unit = MetricsUpdate.UnitKey(bundleID: key.bundleID, originalTransactionID: key.id)
            purchases[unit, default: MetricsPurchase()].graceExpiries = grace
        }
        return purchases
    }

    // MARK: Reading the metrics

    /// What an engine's rollups (`metric_days`, `metric_cohorts`) and periods of service
    /// (`metric_runs`) hold for an app once its job took the purchases taken here.
    private struct Rollups {
        var contributions = MetricContributions()
        /// The periods of each subscription (by original transaction ID), in the environment it counts in.
        var runs: [(purchase: String, environment: String, run: MetricRun)] = []
    }

    /// Works out an app's rollups from the purchases as last taken.
    private func rollups(bundleID: String) -> Rollups {
        var rollups = Rollups()
        var customers: [MetricsUpdate.CustomerKey: [String: MetricUnitRecord]] = [:]
        for (key, purchase) in metricsTaken where key.bundleID == bundleID {
            let original = key.originalTransactionID
            func unit(_ rows: [TransactionRow], grace: [MetricGrace] = []) -> MetricUnit {
                MetricUnit(
                    bundleID: bundleID, originalTransactionID: original,
                    transactions: rows.map { MetricTransaction($0) },
                    graceExpiries: grace)
            }
            let kept = purchase.rows.filter { PurchaseMetricChanges.keptInWrite(productType: $0.productType) }
            let subscription = purchase.rows.filter { !PurchaseMetricChanges.keptInWrite(productType: $0.productType) }
            // Each transaction other than a subscription's adds to the rollups on its own, as the
            // writes keep it; for the customer figures, a customer's transactions of the purchase
            // make one record (those without an owner count for the purchase's own `#` customer).
            for row in kept { rollups.contributions.merge(unit([row]).contributions) }
            let owners = Dictionary(grouping: kept) {
                MetricsUpdate.CustomerKey(
                    bundleID: bundleID, environment: $0.environment, customer: $0.appUserID ?? "#" + original)
            }
            for (owner, rows) in owners { customers[owner, default: [:]][original] = MetricUnitRecord(unit(rows)) }
            // A subscription is worked out from all its transactions; its record stands for the
            // purchase with its customer.
            guard !subscription.isEmpty else { continue }
            let worked = unit(subscription, grace: purchase.graceExpiries)
            rollups.contributions.merge(worked.contributions)
            rollups.runs += worked.runs.map { (purchase: original, environment: worked.environment, run: $0) }
            let customer = MetricsUpdate.CustomerKey(
                bundleID: bundleID, environment: worked.environment, customer: worked.customer)
            customers[customer, default: [:]][original] = MetricUnitRecord(worked)
        }
        for (customer, purchases) in customers {
            var update = MetricsUpdate()
            _ = update.update(customer: customer, stored: nil, purchases: purchases)
            rollups.contributions.merge(update.change)
        }
        return rollups
    }

    /// The rollups as the engines' ``MetricsLedger/metrics(bundleID:environment:days:now:)`` reads them.
    public func metrics(
        bundleID: String, environment: AppStoreEnvironment, days: ClosedRange<Int>, now: Date
    ) async throws -> MetricsReading {
        let rollups = rollups(bundleID: bundleID)
        let environment = environment.rawValue
        let rows = rollups.contributions.sortedDays.filter { $0.key.environment == environment }
        var before = MetricContributions()
        for (key, counts) in rows where key.day < days.lowerBound {
            var summed = key
            summed.day = days.lowerBound - 1
            before.merge(counts, into: summed)
        }
        func day(_ key: MetricDayKey, _ counts: MetricCounts) -> MetricDay {
            MetricDay(
                day: key.day, productID: key.productID, storefront: key.storefront, currency: key.currency,
                store: PurchaseStore(rawValue: key.store) ?? .appStore, counts: counts)
        }
        let moment = LedgerTime.milliseconds(now)
        let pendingTrials = rollups.runs.filter {
            $0.environment == environment && $0.run.kind == .trial && $0.run.end > moment && !$0.run.converted
                && days.contains(MetricMath.day($0.run.start))
        }
        return MetricsReading(
            before: before.sortedDays.map(day),
            days: rows.filter { days.contains($0.key.day) }.map(day),
            cohorts: rollups.contributions.sortedCohorts.filter { $0.key.environment == environment }.compactMap {
                cohort in
                MetricCohortValue.Kind(rawValue: cohort.key.kind).map {
                    MetricCohortValue(
                        kind: $0, cohort: cohort.key.cohort, offset: cohort.key.offset, currency: cohort.key.currency,
                        value: cohort.value)
                }
            },
            pendingTrials: Self.counted(pendingTrials.map(\.run), byDay: true))
    }

    /// The churn ``MetricStatements/churn(bundleID:environment:period:)`` counts: the periods of paid
    /// service covering the instant before a period that end by its last instant, of subscriptions
    /// with no period of paid service covering that last instant.
    public func churnedSubscriptions(
        bundleID: String, environment: AppStoreEnvironment, periods: [MetricPeriod]
    ) async throws -> [[MetricCount]] {
        let paid = rollups(bundleID: bundleID).runs.filter {
            $0.environment == environment.rawValue && $0.run.kind == .paid
        }
        return periods.map { period in
            let (before, last) = MetricStatements.churnInstants(period)
            let churned = paid.filter { ended in
                ended.run.start <= before && ended.run.end > before && ended.run.end <= last
                    && !paid.contains {
                        $0.purchase == ended.purchase && $0.run.start <= last && $0.run.end > last
                    }
            }
            return Self.counted(churned.map(\.run), byDay: false)
        }
    }

    /// How many of `runs` there are per product, storefront and store (and per day they started,
    /// with `byDay`), in that order.
    private static func counted(_ runs: [MetricRun], byDay: Bool) -> [MetricCount] {
        var counts: [MetricCount] = []
        let keys = runs.map {
            MetricCount(
                day: byDay ? MetricMath.day($0.start) : nil, productID: $0.productID, storefront: $0.storefront,
                store: PurchaseStore(rawValue: $0.store) ?? .appStore, count: 1)
        }
        for key in keys.sorted(by: {
            ($0.day ?? 0, $0.productID, $0.storefront, $0.store.rawValue)
                < ($1.day ?? 0, $1.productID, $1.storefront, $1.store.rawValue)
        }) {
            if let last = counts.last,
                (last.day, last.productID, last.storefront, last.store)
                    == (key.day, key.productID, key.storefront, key.store)
            {
                counts[counts.count - 1].count += 1
            } else {
                counts.append(key)
            }
        }
        return counts
    }
}
