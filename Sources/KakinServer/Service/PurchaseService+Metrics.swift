import Foundation
import KakinLedger
import ServiceLifecycle

/// The subscription metrics: kept up to date by a job, read from the ledger's rollups.
extension PurchaseService {
    /// Brings the metrics up to date with every purchase changed so far, a step of `batch`
    /// purchases at a time with a batch of the changes the writes appended (each step one
    /// database transaction, short enough not to hold up the writes around it for long), telling
    /// `step` how many purchases and changes each step took; how many in all. A server shutting
    /// down stops between two steps.
    ///
    /// A step that took less than `batch` took everything changed before it started: the job
    /// stops there, rather than take again, one small step after another, what the writes change
    /// meanwhile (each step a transaction of its own beside theirs); its next run takes it.
    @discardableResult
    public func updateMetrics(batch: Int = 100, step: (Int) -> Void = { _ in }) async throws -> Int {
        var total = 0
        while !Task.isShuttingDownGracefully && !Task.isCancelled {
            let done = try await figures.updateMetrics(limit: batch)
            if done > 0 { step(done) }
            total += done
            guard done >= batch else { return total }
        }
        return total
    }

    /// A metric's answer for `query`, read from the rollups as the job last left them. Days after
    /// today are not counted.
    public func metric(_ metric: SubscriptionMetric, _ query: MetricQuery) async throws -> MetricAnswer {
        try await metrics([metric], query)[metric]!
    }

    /// Several metrics' answers for one query, from one read of the rollups.
    public func metrics(
        _ metrics: [SubscriptionMetric], _ query: MetricQuery
    ) async throws -> [SubscriptionMetric: MetricAnswer] {
        guard let app = apps[query.bundleID] else {
            throw ServerError(.notFound, "no app \(query.bundleID) on this server")
        }
        guard query.from <= query.through else {
            throw ServerError(.invalidRequest, "the range ends before it starts")
        }
        let now = now()
        let reading = try await figures.metrics(
            bundleID: query.bundleID, environment: query.environment, days: query.from...query.through, now: now)
        let report = MetricsReport(
            query: query, reading: reading, now: now, rates: currencyRates, smallBusiness: app.smallBusinessProgram)
        var churned: [[MetricCount]] = []
        if metrics.contains(.churn) {
            churned = try await figures.churnedSubscriptions(
                bundleID: query.bundleID, environment: query.environment, periods: report.churnPeriods)
        }
        var answers: [SubscriptionMetric: MetricAnswer] = [:]
        for metric in metrics { answers[metric] = report.answer(metric, churned: churned) }
        return answers
    }
}
