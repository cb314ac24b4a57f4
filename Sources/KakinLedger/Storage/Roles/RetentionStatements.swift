import AppStoreModels
import Foundation

/// A row of `retention_decisions`: one answer to a `Get Retention Message` request.
struct RetentionDecisionRecord: LedgerRecord {
    static let table = "retention_decisions"
    typealias Columns = CodingKeys

    var decisionID: String
    var bundleID: String
    var environment: String
    var requestIdentifier: String
    var originalTransactionID: String
    var productID: String
    var locale: String
    var subscriberState: String?
    var ruleName: String?
    var choice: String
    var messageID: String?
    var alternateProductID: String?
    var offerID: String?
    var decidedAt: Int64
    var periodExpiresAt: Int64?

    enum CodingKeys: String, CodingKey, CaseIterable {
        case decisionID = "decision_id"
        case bundleID = "bundle_id"
        case environment
        case requestIdentifier = "request_identifier"
        case originalTransactionID = "original_transaction_id"
        case productID = "product_id"
        case locale
        case subscriberState = "subscriber_state"
        case ruleName = "rule_name"
        case choice
        case messageID = "message_id"
        case alternateProductID = "alternate_product_id"
        case offerID = "offer_id"
        case decidedAt = "decided_at"
        case periodExpiresAt = "period_expires_at"
    }

    init(_ decision: RetentionDecision) {
        decisionID = decision.id
        bundleID = decision.bundleID
        environment = decision.environment.rawValue
        requestIdentifier = decision.requestIdentifier
        originalTransactionID = decision.originalTransactionID
        productID = decision.productID
        locale = decision.locale
        subscriberState = decision.subscriberState
        ruleName = decision.ruleName
        choice = decision.choice.rawValue
        messageID = decision.messageID
        alternateProductID = decision.alternateProductID
        offerID = decision.offerID
        decidedAt = LedgerTime.milliseconds(decision.decidedAt)
        periodExpiresAt = decision.periodExpiresAt.map(LedgerTime.milliseconds)
    }

    var decision: RetentionDecision {
        RetentionDecision(
            id: decisionID, bundleID: bundleID, environment: AppStoreEnvironment(rawValue: environment),
            requestIdentifier: requestIdentifier, originalTransactionID: originalTransactionID, productID: productID,
            locale: locale, subscriberState: subscriberState, ruleName: ruleName,
            choice: RetentionDecision.Choice(rawValue: choice) ?? .none, messageID: messageID,
            alternateProductID: alternateProductID, offerID: offerID, decidedAt: LedgerTime.date(decidedAt),
            periodExpiresAt: periodExpiresAt.map(LedgerTime.date))
    }
}

/// A decision read with its outcome (``RetentionStatements/outcome(now:)`` as `outcome`) and the
/// subscription's owner (`app_user_id`).
private struct RetentionDecisionOutcomeRow: Decodable, Sendable {
    var record: RetentionDecisionRecord
    var outcome: String
    var appUserID: String?

    private enum Keys: String, CodingKey {
        case outcome
        case appUserID = "app_user_id"
    }

    init(from decoder: any Decoder) throws {
        record = try RetentionDecisionRecord(from: decoder)
        let columns = try decoder.container(keyedBy: Keys.self)
        outcome = try columns.decode(String.self, forKey: .outcome)
        appUserID = try columns.decodeIfPresent(String.self, forKey: .appUserID)
    }

    var read: RetentionDecisionRead {
        RetentionDecisionRead(
            decision: record.decision, outcome: RetentionOutcome(rawValue: outcome) ?? .pending, appUserID: appUserID)
    }
}

/// One message's counts, as the saves read groups them.
private struct RetentionSavesRow: Decodable, Sendable {
    var message_id: String?
    var shown: Int64
    var stayed: Int64
    var left: Int64
    var pending: Int64
}

/// The statements of retention decisions, the same on both engines; the rule of their outcome is
/// written once, here (``outcome(now:)``).
enum RetentionStatements {
    /// The outcome of the decision `d` as of `now`, as ``RetentionOutcome`` defines it: `stayed`
    /// when the subscription has an unrevoked transaction purchased after the decision (read
    /// through the index by original transaction ID: the subscription's own transactions only);
    /// otherwise `left` when the period in effect at the decision has ended, or the renewal state
    /// says automatic renewal is off or the subscription expired (its row by primary key);
    /// SQLite is told the index by original transaction ID, as its planner, without statistics,
    /// could take the one by app instead;
    /// otherwise `pending`.
    static func outcome(now: Date) -> LedgerSQL {
        """
        CASE
            WHEN EXISTS (
                SELECT 1 FROM transactions t \(.index("transactions_by_original"))
                WHERE t.original_transaction_id = d.original_transaction_id AND t.bundle_id = d.bundle_id
                    AND t.purchase_date > d.decided_at AND t.revocation_date IS NULL
            ) THEN 'stayed'
            WHEN d.period_expires_at <= \(now) THEN 'left'
            WHEN EXISTS (
                SELECT 1 FROM subscription_renewals r
                WHERE r.bundle_id = d.bundle_id AND r.original_transaction_id = d.original_transaction_id
                    AND (r.auto_renew_status = 0 OR r.expiration_intent IS NOT NULL)
            ) THEN 'left'
            ELSE 'pending'
        END
        """
    }

    /// The decisions `filter` selects, with their outcomes as of `now` and the owners of their
    /// subscriptions (the original transaction's, by primary key), newest first, at most `limit`.
    static func decisions(_ filter: LedgerSQL, limit: Int, now: Date) -> LedgerSQL {
        """
        SELECT \(unescaped: RetentionDecisionRecord.selection("d.")), \(outcome(now: now)) AS outcome,
            (SELECT o.app_user_id FROM transactions o
             WHERE o.transaction_id = d.original_transaction_id AND o.bundle_id = d.bundle_id) AS app_user_id
        FROM retention_decisions d
        WHERE \(filter)
        ORDER BY d.decided_at DESC, d.decision_id DESC LIMIT \(limit)
        """
    }
}

/// Retention decisions: recorded with one insert when the server answers Apple, read with their
/// outcomes. None of them runs when a purchase is recorded.
extension StatementEngine {
    public func recordRetentionDecision(_ decision: RetentionDecision) async throws -> Bool {
        try await write(
            """
            INSERT INTO \(insert: RetentionDecisionRecord(decision))
            ON CONFLICT (bundle_id, request_identifier) DO NOTHING RETURNING decision_id
            """) > 0
    }

    public func retentionDecisions(
        bundleID: String, environment: AppStoreEnvironment, limit: Int, after cursor: RetentionDecisionCursor?,
        now: Date
    ) async throws -> [RetentionDecisionRead] {
        guard limit >= 0 else { throw LedgerStoreError(.invalidArgument, "limit must not be negative") }
        var filter: LedgerSQL = "d.bundle_id = \(bundleID) AND d.environment = \(environment.rawValue)"
        if let cursor {
            filter = """
                \(filter) AND (d.decided_at < \(cursor.decidedAt)
                    OR (d.decided_at = \(cursor.decidedAt) AND d.decision_id < \(cursor.id)))
                """
        }
        return try await read(
            RetentionStatements.decisions(filter, limit: limit, now: now), as: RetentionDecisionOutcomeRow.self
        ).map(\.read)
    }

    public func retentionDecisions(
        bundleID: String, originalTransactionID: String, limit: Int, now: Date
    ) async throws -> [RetentionDecisionRead] {
        guard limit >= 0 else { throw LedgerStoreError(.invalidArgument, "limit must not be negative") }
        return try await read(
            RetentionStatements.decisions(
                "d.bundle_id = \(bundleID) AND d.original_transaction_id = \(originalTransactionID)", limit: limit,
                now: now),
            as: RetentionDecisionOutcomeRow.self
        ).map(\.read)
    }

    public func retentionSaves(
        bundleID: String, environment: AppStoreEnvironment, from start: Date, before end: Date, now: Date
    ) async throws -> [RetentionSaves] {
        let rows = try await read(
            """
            SELECT message_id, COUNT(*) AS shown,
                SUM(CASE WHEN outcome = 'stayed' THEN 1 ELSE 0 END) AS stayed,
                SUM(CASE WHEN outcome = 'left' THEN 1 ELSE 0 END) AS "left",
                SUM(CASE WHEN outcome = 'pending' THEN 1 ELSE 0 END) AS pending
            FROM (
                SELECT d.message_id, \(RetentionStatements.outcome(now: now)) AS outcome
                FROM retention_decisions d
                WHERE d.bundle_id = \(bundleID) AND d.environment = \(environment.rawValue)
                    AND d.decided_at >= \(start) AND d.decided_at < \(end)
            ) o
            GROUP BY message_id
            """, as: RetentionSavesRow.self)
        return rows.map {
            RetentionSaves(
                messageID: $0.message_id ?? RetentionSaves.defaultMessage, shown: Int($0.shown),
                stayed: Int($0.stayed), left: Int($0.left), pending: Int($0.pending))
        }.sorted { $0.messageID < $1.messageID }
    }
}
