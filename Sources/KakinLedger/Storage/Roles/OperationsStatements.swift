import AppStoreModels
import Foundation

/// A row of `reconciliation_runs`: one reconciliation of an app, with its progress.
struct ReconciliationRunRow: LedgerRecord {
    static let table = "reconciliation_runs"
    typealias Columns = CodingKeys

    var id: Int64
    var bundleID: String
    var state: String
    var startedAt: Int64
    var updatedAt: Int64
    var finishedAt: Int64?
    var notificationsRead: Int
    var notificationsNew: Int
    var subscriptionsChecked: Int
    var historiesRead: Int
    var transactionsSeen: Int
    var transactionsRecorded: Int
    var transactionsRevoked: Int
    var failure: String?

    enum CodingKeys: String, CodingKey, CaseIterable {
        case id
        case bundleID = "bundle_id"
        case state
        case startedAt = "started_at"
        case updatedAt = "updated_at"
        case finishedAt = "finished_at"
        case notificationsRead = "notifications_read"
        case notificationsNew = "notifications_new"
        case subscriptionsChecked = "subscriptions_checked"
        case historiesRead = "histories_read"
        case transactionsSeen = "transactions_seen"
        case transactionsRecorded = "transactions_recorded"
        case transactionsRevoked = "transactions_revoked"
        case failure
    }

    func run() throws -> ReconciliationRun {
        guard let state = ReconciliationRun.State(rawValue: state) else {
            throw LedgerStoreError(.inconsistentState, "a reconciliation run has an unknown state")
        }
        var run = ReconciliationRun(id: id, bundleID: bundleID, startedAt: LedgerTime.date(startedAt))
        run.state = state
        run.updatedAt = LedgerTime.date(updatedAt)
        run.finishedAt = finishedAt.map(LedgerTime.date)
        run.failure = failure
        run.counts = ReconciliationCounts(values: [
            notificationsRead, notificationsNew, subscriptionsChecked, historiesRead, transactionsSeen,
            transactionsRecorded, transactionsRevoked,
        ])
        return run
    }
}

/// A row of `content_packages`: one version of a product's hosted content.
struct ContentPackageRow: LedgerRecord {
    static let table = "content_packages"
    typealias Columns = CodingKeys

    var bundleID: String
    var productID: String
    var version: String
    var sha256: String
    var size: Int64
    var bytes: Data
    var uploadedAt: Int64

    enum CodingKeys: String, CodingKey, CaseIterable {
        case bundleID = "bundle_id"
        case productID = "product_id"
        case version, sha256, size, bytes
        case uploadedAt = "uploaded_at"
    }
}

/// A row of `notifications`: an App Store Server Notification received, once per UUID.
struct NotificationRow: LedgerRecord {
    static let table = "notifications"
    typealias Columns = CodingKeys

    var notificationUUID: String
    var type: String
    var subtype: String?
    var bundleID: String
    var transactionID: String?
    var signedPayload: String
    var receivedAt: Int64

    enum CodingKeys: String, CodingKey, CaseIterable {
        case notificationUUID = "notification_uuid"
        case type, subtype
        case bundleID = "bundle_id"
        case transactionID = "transaction_id"
        case signedPayload = "signed_payload"
        case receivedAt = "received_at"
    }
}

/// A row of `app_transactions`: the customer an app download was last linked to.
struct AppTransactionRow: LedgerRecord {
    static let table = "app_transactions"
    typealias Columns = CodingKeys

    var bundleID: String
    var appTransactionID: String
    var appUserID: String
    var environment: String
    var linkedAt: Int64

    enum CodingKeys: String, CodingKey, CaseIterable {
        case bundleID = "bundle_id"
        case appTransactionID = "app_transaction_id"
        case appUserID = "app_user_id"
        case environment
        case linkedAt = "linked_at"
    }
}

/// A row of `notification_checkpoints`: until when reconciliation read an app's notification history.
struct NotificationCheckpointRow: LedgerRecord {
    static let table = "notification_checkpoints"
    typealias Columns = CodingKeys

    var bundleID: String
    var environment: String
    var readUntil: Int64
    var updatedAt: Int64

    enum CodingKeys: String, CodingKey, CaseIterable {
        case bundleID = "bundle_id"
        case environment
        case readUntil = "read_until"
        case updatedAt = "updated_at"
    }
}

/// A row of `subscription_renewals`: what the latest notification signed of a subscription's renewal.
struct SubscriptionRenewalRow: LedgerRecord {
    static let table = "subscription_renewals"
    typealias Columns = CodingKeys

    var bundleID: String
    var originalTransactionID: String
    var autoRenewStatus: Int?
    var expirationIntent: Int?
    var billingIssueDetectedAt: Int64?
    var gracePeriodExpiresAt: Int64?
    var signedDate: Int64
    var notificationUUID: String?
    var updatedAt: Int64

    enum CodingKeys: String, CodingKey, CaseIterable {
        case bundleID = "bundle_id"
        case originalTransactionID = "original_transaction_id"
        case autoRenewStatus = "auto_renew_status"
        case expirationIntent = "expiration_intent"
        case billingIssueDetectedAt = "billing_issue_detected_at"
        case gracePeriodExpiresAt = "grace_period_expires_at"
        case signedDate = "signed_date"
        case notificationUUID = "notification_uuid"
        case updatedAt = "updated_at"
    }

    init(_ renewal: SubscriptionRenewal) {
        bundleID = renewal.bundleID
        originalTransactionID = renewal.originalTransactionID
        autoRenewStatus = renewal.autoRenewStatus?.rawValue
        expirationIntent = renewal.expirationIntent?.rawValue
        billingIssueDetectedAt = renewal.billingIssueDetectedAt.map(LedgerTime.milliseconds)
        gracePeriodExpiresAt = renewal.gracePeriodExpiresAt.map(LedgerTime.milliseconds)
        signedDate = LedgerTime.milliseconds(renewal.signedDate)
        notificationUUID = renewal.notificationUUID
        updatedAt = LedgerTime.milliseconds(renewal.updatedAt)
    }

    var renewal: SubscriptionRenewal {
        SubscriptionRenewal(
            bundleID: bundleID, originalTransactionID: originalTransactionID,
            autoRenewStatus: autoRenewStatus.map(AutoRenewStatus.init(rawValue:)),
            expirationIntent: expirationIntent.map(ExpirationIntent.init(rawValue:)),
            billingIssueDetectedAt: billingIssueDetectedAt.map(LedgerTime.date),
            gracePeriodExpiresAt: gracePeriodExpiresAt.map(LedgerTime.date), signedDate: LedgerTime.date(signedDate),
            notificationUUID: notificationUUID, updatedAt: LedgerTime.date(updatedAt))
    }
}

/// A subscription period that ended with nothing recorded since, as ``StatementEngine/lapsedSubscriptions`` reads it.
private struct LapsedRow: Decodable, Sendable {
    var original_transaction_id: String
    var transaction_id: String
    var expires_date: Int64
}

/// Notifications, reconciliation's runs and checkpoints, hosted content, app downloads and
/// subscription renewals, the same statements on both engines.
extension StatementEngine {
    public func recordNotification(
        uuid: String, type: String, subtype: String?, bundleID: String, transactionID: String?, signedPayload: String,
        receivedAt: Date
    ) async throws -> Bool {
        let row = NotificationRow(
            notificationUUID: uuid, type: type, subtype: subtype, bundleID: bundleID, transactionID: transactionID,
            signedPayload: signedPayload, receivedAt: LedgerTime.milliseconds(receivedAt))
        return try await write(
            "INSERT INTO \(insert: row) ON CONFLICT (notification_uuid) DO NOTHING RETURNING notification_uuid") > 0
    }

    // MARK: Reconciliation

    public func startReconciliation(
        bundleID: String, at date: Date, abandonedAfter: TimeInterval
    ) async throws -> (run: ReconciliationRun, isNew: Bool) {
        let stale = LedgerTime.milliseconds(date) - Int64(abandonedAfter * 1000)
        let columns = ReconciliationRunRow.selection()
        return try await perform(
            for: nil,
            .run([
                """
                UPDATE reconciliation_runs SET state = 'failed', finished_at = \(.greatest)(updated_at, started_at),
                    failure = 'the server running it stopped before it ended'
                WHERE bundle_id = \(bundleID) AND state = 'running' AND updated_at < \(stale)
                """,
                """
                INSERT INTO reconciliation_runs (bundle_id, state, started_at, updated_at)
                VALUES (\(bundleID), 'running', \(date), \(date))
                ON CONFLICT (bundle_id) WHERE state = 'running' DO NOTHING
                RETURNING \(unescaped: columns)
                """,
                "SELECT \(unescaped: columns) FROM reconciliation_runs WHERE bundle_id = \(bundleID) AND state = 'running'",
            ]) { rows in
                if let started = try rows[1].first(ReconciliationRunRow.self) { return .done((try started.run(), true)) }
                guard let going = try rows[2].first(ReconciliationRunRow.self) else {
                    throw LedgerStoreError(.inconsistentState, "a reconciliation run was neither started nor found")
                }
                return .done((try going.run(), false))
            })
    }

    public func updateReconciliation(_ run: ReconciliationRun) async throws {
        let counts = run.counts
        try await write(
            """
            UPDATE reconciliation_runs SET state = \(run.state.rawValue), updated_at = \(run.updatedAt),
                finished_at = \(run.finishedAt), failure = \(run.failure),
                notifications_read = \(counts.notificationsRead), notifications_new = \(counts.notificationsNew),
                subscriptions_checked = \(counts.subscriptionsChecked), histories_read = \(counts.historiesRead),
                transactions_seen = \(counts.transactionsSeen), transactions_recorded = \(counts.transactionsRecorded),
                transactions_revoked = \(counts.transactionsRevoked)
            WHERE id = \(run.id)
            """)
    }

    public func reconciliationRun(id: Int64) async throws -> ReconciliationRun? {
        try await read(
            "SELECT \(unescaped: ReconciliationRunRow.selection()) FROM reconciliation_runs WHERE id = \(id)",
            as: ReconciliationRunRow.self
        ).first?.run()
    }

    public func reconciliationRuns(bundleID: String?, limit: Int) async throws -> [ReconciliationRun] {
        try await read(
            """
            SELECT \(unescaped: ReconciliationRunRow.selection()) FROM reconciliation_runs
            \(where: ["bundle_id": bundleID]) ORDER BY id DESC LIMIT \(limit)
            """, as: ReconciliationRunRow.self
        ).map { try $0.run() }
    }

    public func lapsedSubscriptions(
        bundleID: String, environment: AppStoreEnvironment, endedFrom start: Date, before end: Date,
        after cursor: LapsedSubscription?, limit: Int
    ) async throws -> [LapsedSubscription] {
        guard limit > 0 else { return [] }
        let from = cursor?.expiresDate ?? start
        return try await read(
            """
            SELECT t.original_transaction_id, t.transaction_id, t.expires_date FROM transactions t
            WHERE t.bundle_id = \(bundleID) AND t.environment = \(environment.rawValue)
              AND t.expires_date >= \(from) AND t.expires_date < \(end)
              AND (t.expires_date > \(from) OR t.transaction_id > \(cursor?.transactionID ?? ""))
              AND t.revocation_date IS NULL
              AND NOT EXISTS (
                  SELECT 1 FROM transactions later
                  WHERE later.original_transaction_id = t.original_transaction_id
                    AND later.expires_date > t.expires_date)
              AND NOT EXISTS (
                  SELECT 1 FROM subscription_renewals r
                  WHERE r.bundle_id = t.bundle_id AND r.original_transaction_id = t.original_transaction_id
                    AND r.signed_date >= t.expires_date)
            ORDER BY t.expires_date, t.transaction_id LIMIT \(limit)
            """, as: LapsedRow.self
        ).map {
            LapsedSubscription(
                originalTransactionID: $0.original_transaction_id, transactionID: $0.transaction_id,
                expiresDate: LedgerTime.date($0.expires_date))
        }
    }

    public func notificationCheckpoint(bundleID: String, environment: AppStoreEnvironment) async throws -> Date? {
        try await read(
            """
            SELECT \(unescaped: NotificationCheckpointRow.selection()) FROM notification_checkpoints
            WHERE bundle_id = \(bundleID) AND environment = \(environment.rawValue)
            """, as: NotificationCheckpointRow.self
        ).first.map { LedgerTime.date($0.readUntil) }
    }

    public func advanceNotificationCheckpoint(
        bundleID: String, environment: AppStoreEnvironment, to readUntil: Date, at date: Date
    ) async throws {
        let row = NotificationCheckpointRow(
            bundleID: bundleID, environment: environment.rawValue, readUntil: LedgerTime.milliseconds(readUntil),
            updatedAt: LedgerTime.milliseconds(date))
        try await write(
            """
            INSERT INTO \(insert: row)
            ON CONFLICT (bundle_id, environment) DO UPDATE SET
                read_until = \(.greatest)(notification_checkpoints.read_until, excluded.read_until),
                updated_at = excluded.updated_at
            """)
    }

    // MARK: Hosted content

    /// Stores a version of a product's content package. The size and SHA-256 must describe
    /// `bytes`, which cannot be empty. Versions are immutable: the same version again with the
    /// same bytes does nothing, with other bytes is refused.
    public func putContent(_ package: ContentPackage, bytes: Data) async throws {
        let digest = try LedgerRules.validateContent(package, bytes: bytes)
        let row = ContentPackageRow(
            bundleID: package.bundleID, productID: package.productID, version: package.version, sha256: digest,
            size: package.size, bytes: bytes, uploadedAt: LedgerTime.milliseconds(package.uploadedAt))
        try await perform(
            for: nil,
            .run([
                try "INSERT INTO \(insert: row) ON CONFLICT (bundle_id, product_id, version) DO NOTHING RETURNING version",
                """
                SELECT sha256 AS value FROM content_packages
                WHERE bundle_id = \(row.bundleID) AND product_id = \(row.productID) AND version = \(row.version)
                """,
            ]) { rows in
                guard try !rows[0].isEmpty || rows[1].first(LedgerColumn<String>.self)?.value == digest else {
                    throw LedgerStoreError(
                        .contentVersionConflict,
                        "content \(row.productID) \(row.version) was already uploaded with other bytes")
                }
                return .done(())
            })
    }

    public func latestContent(bundleID: String, productID: String) async throws -> (ContentPackage, Data)? {
        try await read(
            """
            SELECT \(unescaped: ContentPackageRow.selection()) FROM content_packages
            WHERE bundle_id = \(bundleID) AND product_id = \(productID) ORDER BY uploaded_at DESC, version DESC LIMIT 1
            """, as: ContentPackageRow.self
        ).first.map { row in
            let package = ContentPackage(
                bundleID: row.bundleID, productID: row.productID, version: row.version, sha256: row.sha256,
                size: row.size, uploadedAt: LedgerTime.date(row.uploadedAt))
            return (package, row.bytes)
        }
    }

    // MARK: Customers and app downloads

    public func aliasedCustomer(bundleID: String, anonymousID: String) async throws -> String? {
        try await value(
            "SELECT app_user_id AS value FROM customer_aliases WHERE bundle_id = \(bundleID) AND alias = \(anonymousID)",
            as: String.self)
    }

    public func linkAppTransaction(
        bundleID: String, appTransactionID: String, appUserID: String, environment: AppStoreEnvironment, at date: Date
    ) async throws {
        let row = AppTransactionRow(
            bundleID: bundleID, appTransactionID: appTransactionID, appUserID: appUserID,
            environment: environment.rawValue, linkedAt: LedgerTime.milliseconds(date))
        try await write(
            for: appUserID,
            """
            INSERT INTO \(insert: row)
            ON CONFLICT (bundle_id, app_transaction_id) DO UPDATE SET
                app_user_id = excluded.app_user_id, environment = excluded.environment, linked_at = excluded.linked_at
            """)
    }

    public func appTransactions(
        bundleID: String, appUserID: String
    ) async throws -> [(appTransactionID: String, linkedAt: Date)] {
        try await read(
            """
            SELECT \(unescaped: AppTransactionRow.selection()) FROM app_transactions
            WHERE bundle_id = \(bundleID) AND app_user_id = \(appUserID)
            ORDER BY linked_at DESC, app_transaction_id LIMIT 50
            """, as: AppTransactionRow.self
        ).map { ($0.appTransactionID, LedgerTime.date($0.linkedAt)) }
    }

    public func appTransactionCustomer(bundleID: String, appTransactionID: String) async throws -> String? {
        try await value(
            """
            SELECT app_user_id AS value FROM app_transactions
            WHERE bundle_id = \(bundleID) AND app_transaction_id = \(appTransactionID)
            """, as: String.self)
    }

    // MARK: Subscription renewals

    /// One upsert: a new subscription's row is inserted; a known one is replaced only when the new
    /// state was signed later, keeping the first date of a billing problem that goes on. A grace
    /// period it reports is kept in `metric_grace`, and its subscription marked for the metrics
    /// job, in the same transaction.
    public func recordRenewal(_ renewal: SubscriptionRenewal) async throws -> Bool {
        let upsert: LedgerSQL = try """
            INSERT INTO \(insert: SubscriptionRenewalRow(renewal))
            ON CONFLICT (bundle_id, original_transaction_id) DO UPDATE SET
                auto_renew_status = excluded.auto_renew_status, expiration_intent = excluded.expiration_intent,
                billing_issue_detected_at = CASE WHEN excluded.billing_issue_detected_at IS NOT NULL THEN
                    COALESCE(subscription_renewals.billing_issue_detected_at, excluded.billing_issue_detected_at) END,
                grace_period_expires_at = excluded.grace_period_expires_at, signed_date = excluded.signed_date,
                notification_uuid = excluded.notification_uuid, updated_at = excluded.updated_at
            WHERE subscription_renewals.signed_date < excluded.signed_date
            RETURNING original_transaction_id
            """
        guard let grace = renewal.gracePeriodExpiresAt else {
            return try await write(upsert) > 0
        }
        let (bundleID, original) = (renewal.bundleID, renewal.originalTransactionID)
        let period = MetricGraceRow(
            bundleID: bundleID, originalTransactionID: original, expiresAt: LedgerTime.milliseconds(grace),
            periodExpiresAt: renewal.periodExpiresAt.map(LedgerTime.milliseconds))
        return try await perform(
            for: nil,
            .run([
                try """
                INSERT INTO \(insert: period)
                ON CONFLICT (bundle_id, original_transaction_id, expires_at) DO UPDATE SET
                    period_expires_at = excluded.period_expires_at
                WHERE metric_grace.period_expires_at IS NULL AND excluded.period_expires_at IS NOT NULL
                RETURNING expires_at
                """
            ]) { rows in
                guard !rows[0].isEmpty else { return .run([upsert]) { .done(!$0[0].isEmpty) } }
                return .run(
                    MetricStatements.mark([MetricsUpdate.UnitKey(bundleID: bundleID, originalTransactionID: original)])
                        + [upsert]
                ) { .done(!$0[1].isEmpty) }
            })
    }

    public func subscriptionRenewals(
        bundleID: String, originalTransactionIDs: [String]
    ) async throws -> [String: SubscriptionRenewal] {
        let ids = Array(Set(originalTransactionIDs)).sorted()
        guard !ids.isEmpty else { return [:] }
        let rows = try await read(
            """
            SELECT \(unescaped: SubscriptionRenewalRow.selection()) FROM subscription_renewals
            WHERE bundle_id = \(bundleID) AND original_transaction_id IN (\(list: ids))
            """, as: SubscriptionRenewalRow.self)
        return Dictionary(rows.map { ($0.originalTransactionID, $0.renewal) }, uniquingKeysWith: { first, _ in first })
    }
}
