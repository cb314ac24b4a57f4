public import AppStoreModels
public import Foundation
import GRDB
import KakinWire

/// Hosted content, the dashboard's reads and sessions, failed sign-ins, offers, calls owed to
/// Apple, app downloads and subscription renewals.
extension SQLiteLedger {
    // MARK: Hosted content

    /// Stores a version of a product's content package. The size and SHA-256 must describe
    /// `bytes`, which cannot be empty. Versions are immutable: the same version again with the
    /// same bytes does nothing, with other bytes is refused.
    public func putContent(_ package: ContentPackage, bytes: Data) async throws {
        let digest = try LedgerRules.validateContent(package, bytes: bytes)
        try await write { db in
            let version: StatementArguments = [package.bundleID, package.productID, package.version]
            let inserted = try db.run(
                """
                INSERT INTO content_packages (bundle_id, product_id, version, sha256, size, bytes, uploaded_at)
                VALUES (?, ?, ?, ?, ?, ?, ?)
                ON CONFLICT (bundle_id, product_id, version) DO NOTHING
                """, version + [digest, package.size, bytes, LedgerTime.milliseconds(package.uploadedAt)])
            guard inserted == 0 else { return }
            let stored: String? = try db.row(
                "SELECT sha256 FROM content_packages WHERE bundle_id = ? AND product_id = ? AND version = ?", version
            )?.value("sha256")
            guard stored == digest else {
                throw LedgerStoreError(
                    .contentVersionConflict,
                    "content \(package.productID) \(package.version) was already uploaded with other bytes")
            }
        }
    }

    public func latestContent(bundleID: String, productID: String) async throws -> (ContentPackage, Data)? {
        try await read { db in
            guard
                let row = try db.row(
                    """
                    SELECT bundle_id, product_id, version, sha256, size, bytes, uploaded_at FROM content_packages
                    WHERE bundle_id = ? AND product_id = ? ORDER BY uploaded_at DESC, version DESC LIMIT 1
                    """, [bundleID, productID])
            else { return nil }
            let package = ContentPackage(
                bundleID: try row.value("bundle_id"), productID: try row.value("product_id"),
                version: try row.value("version"), sha256: try row.value("sha256"),
                size: try row.value("size"), uploadedAt: try row.date("uploaded_at"))
            return (package, try row.value("bytes", Data.self))
        }
    }

    // MARK: Dashboard reads

    // The overview's figures and the customers page: SQLiteLedger+Figures.swift.

    public func receivedNotifications(
        bundleID: String?, appUserID: String?, limit: Int
    ) async throws -> [ReceivedNotification] {
        try await read { db in
            // One customer's are found from their transactions (`CROSS JOIN` keeps that order), the
            // newest of all from the notifications received last.
            let from: String
            let (filter, arguments): (String, StatementArguments)
            if appUserID == nil {
                from = "notifications n LEFT JOIN transactions t ON t.transaction_id = n.transaction_id"
                (filter, arguments) = Database.filter([("n.bundle_id", bundleID)])
            } else {
                from = "transactions t CROSS JOIN notifications n ON n.transaction_id = t.transaction_id"
                (filter, arguments) = Database.filter([("t.bundle_id", bundleID), ("t.app_user_id", appUserID)])
            }
            return try db.rows(
                """
                SELECT n.notification_uuid, n.type, n.subtype, n.bundle_id, n.transaction_id, n.received_at,
                       t.app_user_id, t.revocation_date
                FROM \(from) \(filter) ORDER BY n.received_at DESC, n.notification_uuid LIMIT ?
                """, arguments + [limit]
            ).map { row in
                ReceivedNotification(
                    notificationUUID: try row.value("notification_uuid"),
                    type: try row.value("type"), subtype: try row.value("subtype"),
                    bundleID: try row.value("bundle_id"),
                    transactionID: try row.value("transaction_id"), receivedAt: try row.date("received_at"),
                    appUserID: try row.value("app_user_id"),
                    transactionRevocationDate: try row.optionalDate("revocation_date"))
            }
        }
    }

    public func webhookDeliveries(bundleID: String?, appUserID: String?, limit: Int) async throws -> [WebhookDelivery] {
        try await read { db in
            // Events name an anonymous customer redacted.
            let (filter, arguments) = Database.filter([
                ("e.bundle_id", bundleID), ("e.app_user_id", appUserID.map(CustomerIDRedaction.redacted)),
            ])
            return try db.rows(
                """
                SELECT e.id, e.type, e.bundle_id, e.app_user_id, e.created_at,
                       d.endpoint, d.attempts, d.last_attempt_at, d.delivered_at, d.next_attempt_at
                FROM events e LEFT JOIN event_deliveries d ON d.event_id = e.id
                \(filter) ORDER BY e.id DESC, d.endpoint LIMIT ?
                """, arguments + [limit]
            ).map { row in
                WebhookDelivery(
                    eventID: try row.value("id"), type: try row.value("type"),
                    bundleID: try row.value("bundle_id"), appUserID: try row.value("app_user_id"),
                    createdAt: try row.date("created_at"), endpoint: try row.value("endpoint"),
                    attempts: try row.value("attempts", Int?.self) ?? 0,
                    lastAttemptAt: try row.optionalDate("last_attempt_at"),
                    deliveredAt: try row.optionalDate("delivered_at"),
                    nextAttemptAt: try row.optionalDate("next_attempt_at"))
            }
        }
    }

    public func startReconciliation(
        bundleID: String, at date: Date, abandonedAfter: TimeInterval
    ) async throws -> (run: ReconciliationRun, isNew: Bool) {
        let now = LedgerTime.milliseconds(date)
        return try await write { db in
            try db.run(
                """
                UPDATE reconciliation_runs SET state = 'failed', finished_at = MAX(updated_at, started_at),
                    failure = 'the server running it stopped before it ended'
                WHERE bundle_id = ? AND state = 'running' AND updated_at < ?
                """, [bundleID, now - Int64(abandonedAfter * 1000)])
            if let row = try db.row(
                """
                INSERT INTO reconciliation_runs (bundle_id, state, started_at, updated_at)
                VALUES (?, 'running', ?, ?) ON CONFLICT (bundle_id) WHERE state = 'running' DO NOTHING
                RETURNING \(LedgerSchema.reconciliationColumns)
                """, [bundleID, now, now])
            {
                return (try Self.reconciliationRun(row), true)
            }
            guard
                let going = try db.row(
                    """
                    SELECT \(LedgerSchema.reconciliationColumns) FROM reconciliation_runs
                    WHERE bundle_id = ? AND state = 'running'
                    """, [bundleID])
            else { throw LedgerStoreError(.inconsistentState, "a reconciliation run was neither started nor found") }
            return (try Self.reconciliationRun(going), false)
        }
    }

    public func updateReconciliation(_ run: ReconciliationRun) async throws {
        try await write { db in
            try db.run(
                """
                UPDATE reconciliation_runs SET state = ?, updated_at = ?, finished_at = ?, failure = ?,
                    \(ReconciliationCounts.columns.map { "\($0) = ?" }.joined(separator: ", "))
                WHERE id = ?
                """,
                StatementArguments([
                    run.state.rawValue, LedgerTime.milliseconds(run.updatedAt),
                    run.finishedAt.map(LedgerTime.milliseconds), run.failure,
                ] as [(any DatabaseValueConvertible)?]) + StatementArguments(run.counts.values) + [run.id])
        }
    }

    public func reconciliationRun(id: Int64) async throws -> ReconciliationRun? {
        try await read { db in
            try db.row(
                "SELECT \(LedgerSchema.reconciliationColumns) FROM reconciliation_runs WHERE id = ?", [id]
            ).map(Self.reconciliationRun)
        }
    }

    public func reconciliationRuns(bundleID: String?, limit: Int) async throws -> [ReconciliationRun] {
        try await read { db in
            let (filter, arguments) = Database.filter([("bundle_id", bundleID)])
            return try db.rows(
                """
                SELECT \(LedgerSchema.reconciliationColumns) FROM reconciliation_runs \(filter)
                ORDER BY id DESC LIMIT ?
                """, arguments + [limit]
            ).map(Self.reconciliationRun)
        }
    }

    private static func reconciliationRun(_ row: Row) throws -> ReconciliationRun {
        var run = ReconciliationRun(
            id: try row.value("id"), bundleID: try row.value("bundle_id"), startedAt: try row.date("started_at"))
        guard let state = ReconciliationRun.State(rawValue: try row.value("state")) else {
            throw LedgerStoreError(.inconsistentState, "a reconciliation run has an unknown state")
        }
        run.state = state
        run.updatedAt = try row.date("updated_at")
        run.finishedAt = try row.optionalDate("finished_at")
        run.failure = try row.value("failure")
        run.counts = ReconciliationCounts(values: try ReconciliationCounts.columns.map { try row.value($0) })
        return run
    }

    public func lapsedSubscriptions(
        bundleID: String, environment: AppStoreEnvironment, endedFrom start: Date, before end: Date,
        after cursor: LapsedSubscription?, limit: Int
    ) async throws -> [LapsedSubscription] {
        guard limit > 0 else { return [] }
        let from = cursor.map { LedgerTime.milliseconds($0.expiresDate) } ?? LedgerTime.milliseconds(start)
        return try await read { db in
            try db.rows(
                LedgerSchema.lapsedSubscriptionsQuery(placeholder: { _ in "?" }),
                [
                    bundleID, environment.rawValue, from, LedgerTime.milliseconds(end), from,
                    cursor?.transactionID ?? "", limit,
                ]
            ).map { row in
                LapsedSubscription(
                    originalTransactionID: try row.value("original_transaction_id"),
                    transactionID: try row.value("transaction_id"), expiresDate: try row.date("expires_date"))
            }
        }
    }

    public func notificationCheckpoint(bundleID: String, environment: AppStoreEnvironment) async throws -> Date? {
        try await read { db in
            try db.row(
                "SELECT read_until FROM notification_checkpoints WHERE bundle_id = ? AND environment = ?",
                [bundleID, environment.rawValue])?.date("read_until")
        }
    }

    public func advanceNotificationCheckpoint(
        bundleID: String, environment: AppStoreEnvironment, to readUntil: Date, at date: Date
    ) async throws {
        try await write { db in
            try db.run(
                """
                INSERT INTO notification_checkpoints (bundle_id, environment, read_until, updated_at) VALUES (?, ?, ?, ?)
                ON CONFLICT (bundle_id, environment) DO UPDATE SET
                    read_until = MAX(notification_checkpoints.read_until, excluded.read_until),
                    updated_at = excluded.updated_at
                """,
                [bundleID, environment.rawValue, LedgerTime.milliseconds(readUntil), LedgerTime.milliseconds(date)])
        }
    }

    // MARK: Dashboard sessions

    public func insertDashboardToken(
        digest: Data, kind: DashboardTokenKind, csrf: String?, scope: DashboardScope?, expires: Date, now: Date
    ) async throws -> Bool {
        try await write { db in
            try db.run("DELETE FROM dashboard_tokens WHERE expires_at <= ?", [LedgerTime.milliseconds(now)])
            return try db.run(
                """
                INSERT INTO dashboard_tokens (digest, kind, csrf, apps, expires_at) VALUES (?, ?, ?, ?, ?)
                ON CONFLICT (digest) DO NOTHING
                """, [digest, kind.rawValue, csrf, scope?.stored, LedgerTime.milliseconds(expires)]) > 0
        }
    }

    public func dashboardToken(
        digest: Data, kind: DashboardTokenKind, now: Date
    ) async throws -> (csrf: String?, scope: DashboardScope?, expires: Date)? {
        try await read { db in
            guard
                let row = try db.row(
                    """
                    SELECT csrf, apps, expires_at FROM dashboard_tokens
                    WHERE digest = ? AND kind = ? AND expires_at > ?
                    """,
                    [digest, kind.rawValue, LedgerTime.milliseconds(now)])
            else { return nil }
            return (try row.value("csrf"), DashboardScope(stored: try row.value("apps")), try row.date("expires_at"))
        }
    }

    public func deleteDashboardToken(digest: Data) async throws {
        try await write { db in try db.run("DELETE FROM dashboard_tokens WHERE digest = ?", [digest]) }
    }

    // MARK: Failed sign-ins

    /// Counts one failed sign-in against `subject` (one row per subject, raised by an upsert) and
    /// returns its count and the instant it must wait until, as `policy` says. Failures are
    /// forgotten once the subject has been quiet for the policy's window.
    public func recordSignInFailure(
        _ subject: SignInSubject, policy: SignInThrottlePolicy, now: Date
    ) async throws -> SignInFailureCount {
        let current = LedgerTime.milliseconds(now)
        let cutoff = current - Int64(policy.windowSeconds) * 1000
        return try await write { db in
            try db.run("DELETE FROM sign_in_failures WHERE last_failure_at < ? AND locked_until < ?", [cutoff, cutoff])
            try db.run(
                """
                INSERT INTO sign_in_failures (subject, failures, last_failure_at, locked_until) VALUES (?, 1, ?, 0)
                ON CONFLICT (subject) DO UPDATE SET
                    failures = CASE
                        WHEN sign_in_failures.last_failure_at < ? AND sign_in_failures.locked_until < ? THEN 1
                        ELSE sign_in_failures.failures + 1
                    END,
                    last_failure_at = excluded.last_failure_at
                """, [subject.key, current, cutoff, cutoff])
            guard
                let row = try db.row(
                    "SELECT failures, locked_until FROM sign_in_failures WHERE subject = ?", [subject.key])
            else { throw LedgerStoreError(.inconsistentState, "the failure counted for \(subject.key) is not stored") }
            let failures: Int = try row.value("failures")
            var lockedUntil = try row.date("locked_until")
            let wait = policy.waitSeconds(afterFailures: failures, of: subject)
            let until = now.addingTimeInterval(TimeInterval(wait))
            if wait > 0, until > lockedUntil {
                lockedUntil = until
                try db.run(
                    "UPDATE sign_in_failures SET locked_until = ? WHERE subject = ?",
                    [LedgerTime.milliseconds(until), subject.key])
            }
            return SignInFailureCount(subject: subject, failures: failures, lockedUntil: lockedUntil)
        }
    }

    public func signInLockedUntil(_ subjects: [SignInSubject], now: Date) async throws -> Date? {
        guard !subjects.isEmpty else { return nil }
        let keys = subjects.map(\.key)
        return try await read { db in
            try Row.fetchOne(
                db,
                sql: """
                    SELECT MAX(locked_until) AS until FROM sign_in_failures
                    WHERE locked_until > ? AND subject IN (\(Database.placeholders(keys.count)))
                    """, arguments: [LedgerTime.milliseconds(now)] + StatementArguments(keys)
            )?.optionalDate("until")
        }
    }

    @discardableResult
    public func clearSignInFailures(_ subject: SignInSubject?) async throws -> Int {
        try await write { db in
            guard let subject else { return try db.run("DELETE FROM sign_in_failures") }
            return try db.run("DELETE FROM sign_in_failures WHERE subject = ?", [subject.key])
        }
    }

    public func signInFailures() async throws -> [SignInFailureCount] {
        try await read { db in
            try db.rows(
                """
                SELECT subject, failures, last_failure_at, locked_until FROM sign_in_failures
                ORDER BY locked_until DESC, last_failure_at DESC
                """
            ).compactMap { row in
                guard let subject = SignInSubject(key: try row.value("subject")) else { return nil }
                return SignInFailureCount(
                    subject: subject, failures: try row.value("failures"),
                    lockedUntil: try row.date("locked_until"), lastFailure: try row.date("last_failure_at"))
            }
        }
    }

    // MARK: Offers and calls owed to Apple

    public func recordOfferSignature(_ record: OfferSignatureRecord) async throws {
        try await write { db in
            let inserted = try db.run(
                """
                INSERT INTO offer_signatures (nonce, bundle_id, app_user_id, product_id, offer_id, kind, key_id, created_at)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (nonce) DO NOTHING
                """,
                [
                    record.nonce, record.bundleID, record.appUserID, record.productID, record.offerID,
                    record.kind.rawValue, record.keyID, LedgerTime.milliseconds(record.createdAt),
                ])
            guard inserted > 0 else {
                throw LedgerStoreError(.invalidArgument, "an offer signature with nonce \(record.nonce) exists already")
            }
        }
    }

    public func offerSignatures(bundleID: String?, limit: Int) async throws -> [OfferSignatureRecord] {
        try await read { db in
            let (filter, arguments) = Database.filter([("bundle_id", bundleID)])
            return try db.rows(
                """
                SELECT nonce, bundle_id, app_user_id, product_id, offer_id, kind, key_id, created_at FROM offer_signatures
                \(filter) ORDER BY created_at DESC, nonce LIMIT ?
                """, arguments + [limit]
            ).map { row in
                OfferSignatureRecord(
                    nonce: try row.value("nonce"), bundleID: try row.value("bundle_id"),
                    appUserID: try row.value("app_user_id"), productID: try row.value("product_id"),
                    offerID: try row.value("offer_id"),
                    kind: OfferSigningRequest.Kind(rawValue: try row.value("kind")) ?? .promotional,
                    keyID: try row.value("key_id"), createdAt: try row.date("created_at"))
            }
        }
    }

    @discardableResult
    public func recordAppleRequest(_ request: AppleRequestRecord) async throws -> Bool {
        try await write { db in try Self.insert(request, db) }
    }

    /// Writes a call owed to Apple in the write's transaction; `false` when its ID is known.
    @discardableResult
    static func insert(_ request: AppleRequestRecord, _ db: Database) throws -> Bool {
        try db.run(
            """
            INSERT INTO apple_requests
                (id, kind, bundle_id, transaction_id, environment, detail, requested_at, state, next_attempt_at,
                 last_error, finished_at)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (id) DO NOTHING
            """,
            [
                request.id, request.kind.rawValue, request.bundleID, request.transactionID,
                request.environment.rawValue, request.detail, LedgerTime.milliseconds(request.requestedAt),
                request.state.rawValue, LedgerTime.milliseconds(request.nextAttemptAt), request.lastError,
                request.finishedAt.map(LedgerTime.milliseconds),
            ]) > 0
    }

    public func claimDueAppleRequests(now: Date, limit: Int, leaseUntil: Date) async throws -> [AppleRequestRecord] {
        let current = LedgerTime.milliseconds(now)
        return try await write { db in
            try db.rows(
                """
                UPDATE apple_requests SET leased_until = ?1, attempts = attempts + 1
                WHERE id IN (
                    SELECT id FROM apple_requests
                    WHERE state = 'pending' AND next_attempt_at <= ?2 AND leased_until <= ?2
                    ORDER BY next_attempt_at LIMIT ?3)
                RETURNING \(Self.appleRequestColumns)
                """, [LedgerTime.milliseconds(leaseUntil), current, limit]
            ).map(Self.appleRequest)
        }
    }

    public func finishAppleRequest(
        _ id: String, state: AppleRequestRecord.State, sentBody: String?, error: String?, retryAt: Date?, at date: Date
    ) async throws {
        try await write { db in
            try db.run(
                """
                UPDATE apple_requests SET state = ?, sent_body = ?, last_error = ?, next_attempt_at = ?, finished_at = ?,
                    leased_until = 0
                WHERE id = ?
                """,
                [
                    state.rawValue, sentBody, error, retryAt.map(LedgerTime.milliseconds) ?? 0,
                    state == .pending ? nil : LedgerTime.milliseconds(date), id,
                ])
        }
    }

    public func appleRequests(bundleID: String?, limit: Int) async throws -> [AppleRequestRecord] {
        try await read { db in
            let (filter, arguments) = Database.filter([("bundle_id", bundleID)])
            return try db.rows(
                "SELECT \(Self.appleRequestColumns) FROM apple_requests \(filter) ORDER BY requested_at DESC, id LIMIT ?",
                arguments + [limit]
            ).map(Self.appleRequest)
        }
    }

    private static let appleRequestColumns = """
        id, kind, bundle_id, transaction_id, environment, detail, requested_at, state, attempts, next_attempt_at,
        sent_body, last_error, finished_at
        """

    private static func appleRequest(_ row: Row) throws -> AppleRequestRecord {
        AppleRequestRecord(
            id: try row.value("id"),
            kind: AppleRequestRecord.Kind(rawValue: try row.value("kind")) ?? .consumptionInformation,
            bundleID: try row.value("bundle_id"), transactionID: try row.value("transaction_id"),
            environment: AppStoreEnvironment(rawValue: try row.value("environment")),
            detail: try row.value("detail"), requestedAt: try row.date("requested_at"),
            state: AppleRequestRecord.State(rawValue: try row.value("state")) ?? .failed,
            attempts: try row.value("attempts"), nextAttemptAt: try row.date("next_attempt_at"),
            sentBody: try row.value("sent_body"), lastError: try row.value("last_error"),
            finishedAt: try row.optionalDate("finished_at"))
    }

    // MARK: App downloads

    public func linkAppTransaction(
        bundleID: String, appTransactionID: String, appUserID: String, environment: AppStoreEnvironment, at date: Date
    ) async throws {
        try await write { db in
            try db.run(
                """
                INSERT INTO app_transactions (bundle_id, app_transaction_id, app_user_id, environment, linked_at)
                VALUES (?, ?, ?, ?, ?)
                ON CONFLICT (bundle_id, app_transaction_id) DO UPDATE SET
                    app_user_id = excluded.app_user_id, environment = excluded.environment, linked_at = excluded.linked_at
                """, [bundleID, appTransactionID, appUserID, environment.rawValue, LedgerTime.milliseconds(date)])
        }
    }

    public func appTransactions(
        bundleID: String, appUserID: String
    ) async throws -> [(appTransactionID: String, linkedAt: Date)] {
        try await read { db in
            try db.rows(
                """
                SELECT app_transaction_id, linked_at FROM app_transactions WHERE bundle_id = ? AND app_user_id = ?
                ORDER BY linked_at DESC, app_transaction_id LIMIT 50
                """, [bundleID, appUserID]
            ).map { (try $0.value("app_transaction_id", String.self), try $0.date("linked_at")) }
        }
    }

    public func appTransactionCustomer(bundleID: String, appTransactionID: String) async throws -> String? {
        try await read { db in
            try db.row(
                "SELECT app_user_id FROM app_transactions WHERE bundle_id = ? AND app_transaction_id = ?",
                [bundleID, appTransactionID])?.value("app_user_id")
        }
    }

    // MARK: Subscription renewals

    /// One upsert: a new subscription's row is inserted; a known one is replaced only when the new
    /// state was signed later, keeping the first date of a billing problem that goes on.
    public func recordRenewal(_ renewal: SubscriptionRenewal) async throws -> Bool {
        try await write { db in
            if let grace = renewal.gracePeriodExpiresAt {
                try Self.recordGrace(
                    bundleID: renewal.bundleID, renewal.originalTransactionID, expiresAt: LedgerTime.milliseconds(grace),
                    periodExpiresAt: renewal.periodExpiresAt.map(LedgerTime.milliseconds), db)
            }
            return try db.run(
                """
                INSERT INTO subscription_renewals
                    (bundle_id, original_transaction_id, auto_renew_status, expiration_intent, billing_issue_detected_at,
                     grace_period_expires_at, signed_date, notification_uuid, updated_at)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
                ON CONFLICT (bundle_id, original_transaction_id) DO UPDATE SET
                    auto_renew_status = excluded.auto_renew_status,
                    expiration_intent = excluded.expiration_intent,
                    billing_issue_detected_at = CASE WHEN excluded.billing_issue_detected_at IS NULL THEN NULL
                        ELSE COALESCE(subscription_renewals.billing_issue_detected_at, excluded.billing_issue_detected_at)
                        END,
                    grace_period_expires_at = excluded.grace_period_expires_at,
                    signed_date = excluded.signed_date,
                    notification_uuid = excluded.notification_uuid,
                    updated_at = excluded.updated_at
                WHERE subscription_renewals.signed_date < excluded.signed_date
                """,
                [
                    renewal.bundleID, renewal.originalTransactionID, renewal.autoRenewStatus?.rawValue,
                    renewal.expirationIntent?.rawValue, renewal.billingIssueDetectedAt.map(LedgerTime.milliseconds),
                    renewal.gracePeriodExpiresAt.map(LedgerTime.milliseconds),
                    LedgerTime.milliseconds(renewal.signedDate),
                    renewal.notificationUUID, LedgerTime.milliseconds(renewal.updatedAt),
                ]) > 0
        }
    }

    /// The renewal state of an app's subscriptions, by original transaction ID, in one read by the
    /// table's primary key.
    public func subscriptionRenewals(
        bundleID: String, originalTransactionIDs: [String]
    ) async throws -> [String: SubscriptionRenewal] {
        let ids = Array(Set(originalTransactionIDs)).sorted()
        guard !ids.isEmpty else { return [:] }
        return try await read { db in
            var renewals: [String: SubscriptionRenewal] = [:]
            for row in try Row.fetchAll(
                db,
                sql: """
                    SELECT original_transaction_id, auto_renew_status, expiration_intent, billing_issue_detected_at,
                        grace_period_expires_at, signed_date, notification_uuid, updated_at
                    FROM subscription_renewals
                    WHERE bundle_id = ? AND original_transaction_id IN (\(Database.placeholders(ids.count)))
                    """, arguments: [bundleID] + StatementArguments(ids))
            {
                let id: String = try row.value("original_transaction_id")
                renewals[id] = SubscriptionRenewal(
                    bundleID: bundleID, originalTransactionID: id,
                    autoRenewStatus: try row.value("auto_renew_status", Int?.self)
                        .map(AutoRenewStatus.init(rawValue:)),
                    expirationIntent: try row.value("expiration_intent", Int?.self)
                        .map(ExpirationIntent.init(rawValue:)),
                    billingIssueDetectedAt: try row.optionalDate("billing_issue_detected_at"),
                    gracePeriodExpiresAt: try row.optionalDate("grace_period_expires_at"),
                    signedDate: try row.date("signed_date"), notificationUUID: try row.value("notification_uuid"),
                    updatedAt: try row.date("updated_at"))
            }
            return renewals
        }
    }
}
