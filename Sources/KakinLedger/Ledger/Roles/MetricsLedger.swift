public import AppStoreModels
public import Foundation

/// The figures and subscription metrics an app's pages read: kept with the writes, or brought up to
/// date in batches, and read without reading the transactions.
///
/// One role of ``LedgerStore``.
public protocol MetricsLedger: Sendable {
    /// An app's figures (``DailyFigures``) for the UTC days numbered `days`, kept with each write
    /// and read without reading its transactions, with the subscriptions active before the first
    /// of those days (one sum over the figures of the days before) and at `now` (the figures up to
    /// now's day, plus the subscriptions whose period ends later that day, read through the index
    /// by expiry).
    func dailyFigures(bundleID: String, days: Range<Int>, now: Date) async throws -> DailyFiguresPeriod

    /// Brings the subscription metrics up to date with at most `limit` of the purchases whose
    /// transactions (or grace periods) changed since: each is worked out again from all its
    /// transactions, and the difference from what it contributed before is added to the rollups,
    /// in one database transaction; with them, a batch of the rollups' changes the writes
    /// appended is folded into the rollups. Returns how many purchases and changes were taken;
    /// zero when the metrics are up to date. Servers sharing a database take turns.
    func updateMetrics(limit: Int) async throws -> Int

    /// The rollups an app's environment's metrics are read from, for the UTC days in `days`.
    func metrics(
        bundleID: String, environment: AppStoreEnvironment, days: ClosedRange<Int>, now: Date
    ) async throws -> MetricsReading

    /// For each period, the subscriptions that were active and paid at the last instant before it
    /// and are not active at its last instant, by the product, storefront and store they ended with:
    /// read from the periods of paid service that end inside it.
    func churnedSubscriptions(
        bundleID: String, environment: AppStoreEnvironment, periods: [MetricPeriod]
    ) async throws -> [[MetricCount]]
}
