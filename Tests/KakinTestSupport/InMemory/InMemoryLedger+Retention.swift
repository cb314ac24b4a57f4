import AppStoreModels
import Foundation

@testable import KakinLedger

/// The answers given to Apple's `Get Retention Message` requests, kept by ``InMemoryLedger``
/// beside the subscriptions they were about: ``RetentionLedger`` without a database.
///
/// The outcome of a decision is worked out when read, from the same transactions and renewal
/// states the purchase roles keep, by the rule the engines hold in one SQL expression
/// (`RetentionStatements.outcome`), applied here plainly: instants compared in whole milliseconds,
/// as the engines store them.
extension InMemoryLedger: RetentionLedger {
    public func recordRetentionDecision(_ decision: RetentionDecision) async throws -> Bool {
        let key = AppKey(bundleID: decision.bundleID, id: decision.requestIdentifier)
        guard retentionDecisionsByRequest[key] == nil else { return false }
        var kept = decision
        kept.decidedAt = stored(decision.decidedAt)
        kept.periodExpiresAt = decision.periodExpiresAt.map(stored)
        retentionDecisionsByRequest[key] = kept
        return true
    }

    public func retentionDecisions(
        bundleID: String, environment: AppStoreEnvironment, limit: Int, after cursor: RetentionDecisionCursor?,
        now: Date
    ) async throws -> [RetentionDecisionRead] {
        let cursor = cursor.map { (decidedAt: stored($0.decidedAt), id: $0.id) }
        return try newest(limit: limit, now: now) { decision in
            guard decision.bundleID == bundleID, decision.environment == environment else { return false }
            guard let cursor else { return true }
            return (decision.decidedAt, decision.id) < (cursor.decidedAt, cursor.id)
        }
    }

    public func retentionDecisions(
        bundleID: String, originalTransactionID: String, limit: Int, now: Date
    ) async throws -> [RetentionDecisionRead] {
        try newest(limit: limit, now: now) {
            $0.bundleID == bundleID && $0.originalTransactionID == originalTransactionID
        }
    }

    public func retentionSaves(
        bundleID: String, environment: AppStoreEnvironment, from start: Date, before end: Date, now: Date
    ) async throws -> [RetentionSaves] {
        let (start, end) = (stored(start), stored(end))
        var saves: [String: RetentionSaves] = [:]
        for decision in retentionDecisionsByRequest.values
        where decision.bundleID == bundleID && decision.environment == environment
            && decision.decidedAt >= start && decision.decidedAt < end
        {
            let message = decision.messageID ?? RetentionSaves.defaultMessage
            var counts = saves[message] ?? RetentionSaves(messageID: message, shown: 0, stayed: 0, left: 0, pending: 0)
            counts.shown += 1
            switch outcome(of: decision, now: now) {
            case .stayed: counts.stayed += 1
            case .left: counts.left += 1
            case .pending: counts.pending += 1
            }
            saves[message] = counts
        }
        return saves.values.sorted { $0.messageID < $1.messageID }
    }

    /// The decisions `matching` selects, newest first (by time, then ID), at most `limit`, each
    /// with its outcome as of `now` and the owner of its subscription's original transaction.
    private func newest(
        limit: Int, now: Date, matching: (RetentionDecision) -> Bool
    ) throws -> [RetentionDecisionRead] {
        guard limit >= 0 else { throw LedgerStoreError(.invalidArgument, "limit must not be negative") }
        return retentionDecisionsByRequest.values.filter(matching)
            .sorted { ($1.decidedAt, $1.id) < ($0.decidedAt, $0.id) }
            .prefix(limit)
            .map { decision in
                let original = transactions[decision.originalTransactionID]
                return RetentionDecisionRead(
                    decision: decision, outcome: outcome(of: decision, now: now),
                    appUserID: original?.bundleID == decision.bundleID ? original?.appUserID : nil)
            }
    }

    /// `stayed` when the subscription has an unrevoked transaction bought after the decision;
    /// otherwise `left` when the period in effect at the decision has ended, or its renewal state
    /// says automatic renewal is off or the subscription expired; otherwise `pending`.
    private func outcome(of decision: RetentionDecision, now: Date) -> RetentionOutcome {
        let decidedAt = LedgerTime.milliseconds(decision.decidedAt)
        let renewedSince = transactions.values.contains {
            $0.bundleID == decision.bundleID && $0.originalTransactionID == decision.originalTransactionID
                && $0.purchaseDate > decidedAt && $0.revocationDate == nil
        }
        if renewedSince { return .stayed }
        if let end = decision.periodExpiresAt, LedgerTime.milliseconds(end) <= LedgerTime.milliseconds(now) {
            return .left
        }
        let renewal = renewals[AppKey(bundleID: decision.bundleID, id: decision.originalTransactionID)]
        if let renewal, renewal.autoRenewStatus == 0 || renewal.expirationIntent != nil { return .left }
        return .pending
    }
}
