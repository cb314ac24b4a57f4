public import AppStoreModels
public import Foundation

/// The answers given to the App Store's `Get Retention Message` requests, and whether the
/// subscribers they were shown to stayed (``RetentionOutcome``, worked out when read).
///
/// One role of ``LedgerStore``.
public protocol RetentionLedger: Sendable {
    /// Records a decision, once per app and request identifier: `false` when the request was
    /// recorded before (Apple sent it again). One insert.
    func recordRetentionDecision(_ decision: RetentionDecision) async throws -> Bool

    /// A page of an app's decisions in one environment, newest first, strictly after `cursor`,
    /// each with its outcome as of `now`: a walk of the index by app and time, and for each
    /// decision read, the subscription's own transactions and renewal state.
    func retentionDecisions(
        bundleID: String, environment: AppStoreEnvironment, limit: Int, after cursor: RetentionDecisionCursor?,
        now: Date
    ) async throws -> [RetentionDecisionRead]

    /// The decisions of one subscription, newest first (at most `limit`), with their outcomes as
    /// of `now`.
    func retentionDecisions(
        bundleID: String, originalTransactionID: String, limit: Int, now: Date
    ) async throws -> [RetentionDecisionRead]

    /// An app's saves by message over the decisions made in one environment at or after `start`
    /// and before `end`, as of `now`: per message ID (``RetentionSaves/defaultMessage`` for no
    /// choice), by message ID.
    func retentionSaves(
        bundleID: String, environment: AppStoreEnvironment, from start: Date, before end: Date, now: Date
    ) async throws -> [RetentionSaves]
}
