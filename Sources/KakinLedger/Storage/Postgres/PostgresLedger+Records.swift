import AppStoreModels
public import Foundation
import KakinWire
import PostgresNIO

/// Notifications, the webhooks outbox, content, dashboard sessions, failed sign-ins, offers,
/// calls owed to Apple, app downloads and subscription renewals: one statement each, or a few in
/// one write transaction. Every write goes through a writer, so it is durable when it returns.
extension PostgresLedger {
    public func recordNotification(
        uuid: String, type: String, subtype: String?, bundleID: String, transactionID: String?, signedPayload: String,
        receivedAt: Date
    ) async throws -> Bool {
        try await !written(
            """
            INSERT INTO notifications
                (notification_uuid, type, subtype, bundle_id, transaction_id, signed_payload, received_at)
            VALUES (\(uuid), \(type), \(subtype), \(bundleID), \(transactionID), \(signedPayload), \(ms(receivedAt)))
            ON CONFLICT (notification_uuid) DO NOTHING RETURNING notification_uuid
            """
        ).isEmpty
    }

    public func startReconciliation(
        bundleID: String, at date: Date, abandonedAfter: TimeInterval
    ) async throws -> (run: ReconciliationRun, isNew: Bool) {
        let now = ms(date)
        let stale = now - Int64(abandonedAfter * 1000)
        return try await write { connection in
            _ = try await connection.rows(
                """
                UPDATE reconciliation_runs SET state = 'failed', finished_at = GREATEST(updated_at, started_at),
                    failure = 'the server running it stopped before it ended'
                WHERE bundle_id = \(bundleID) AND state = 'running' AND updated_at < \(stale)
                """)
            if let row = try await connection.rows(
                """
                INSERT INTO reconciliation_runs (bundle_id, state, started_at, updated_at)
                VALUES (\(bundleID), 'running', \(now), \(now))
                ON CONFLICT (bundle_id) WHERE state = 'running' DO NOTHING
                RETURNING \(unescaped: LedgerSchema.reconciliationColumns)
                """
            ).first {
                return (try Self.reconciliationRun(row), true)
            }
            guard
                let going = try await connection.rows(
                    """
                    SELECT \(unescaped: LedgerSchema.reconciliationColumns) FROM reconciliation_runs
                    WHERE bundle_id = \(bundleID) AND state = 'running'
                    """
                ).first
            else { throw LedgerStoreError(.inconsistentState, "a reconciliation run was neither started nor found") }
            return (try Self.reconciliationRun(going), false)
        }
    }

    public func updateReconciliation(_ run: ReconciliationRun) async throws {
        let counts = run.counts
        try await written(
            """
            UPDATE reconciliation_runs SET state = \(run.state.rawValue), updated_at = \(ms(run.updatedAt)),
                finished_at = \(run.finishedAt.map(ms)), failure = \(run.failure),
                notifications_read = \(counts.notificationsRead), notifications_new = \(counts.notificationsNew),
                subscriptions_checked = \(counts.subscriptionsChecked), histories_read = \(counts.historiesRead),
                transactions_seen = \(counts.transactionsSeen), transactions_recorded = \(counts.transactionsRecorded),
                transactions_revoked = \(counts.transactionsRevoked)
            WHERE id = \(run.id)
            """)
    }

    public func reconciliationRun(id: Int64) async throws -> ReconciliationRun? {
        try await rows(
            "SELECT \(unescaped: LedgerSchema.reconciliationColumns) FROM reconciliation_runs WHERE id = \(id)"
        ).first.map { try Self.reconciliationRun($0) }
    }

    public func reconciliationRuns(bundleID: String?, limit: Int) async throws -> [ReconciliationRun] {
        try await rows(
            """
            SELECT \(unescaped: LedgerSchema.reconciliationColumns) FROM reconciliation_runs
            WHERE \(bundleID)::TEXT IS NULL OR bundle_id = \(bundleID)
            ORDER BY id DESC LIMIT \(Int64(limit))
            """
        ).map { try Self.reconciliationRun($0) }
    }

    private static func reconciliationRun(_ row: PostgresRow) throws -> ReconciliationRun {
        let row = row.makeRandomAccess()
        guard let state = ReconciliationRun.State(rawValue: try row["state"].decode(String.self)) else {
            throw LedgerStoreError(.inconsistentState, "a reconciliation run has an unknown state")
        }
        var run = ReconciliationRun(
            id: try row["id"].decode(Int64.self), bundleID: try row["bundle_id"].decode(String.self),
            startedAt: LedgerTime.date(try row["started_at"].decode(Int64.self)))
        run.state = state
        run.updatedAt = LedgerTime.date(try row["updated_at"].decode(Int64.self))
        run.finishedAt = try row["finished_at"].decode(Int64?.self).map(LedgerTime.date)
        run.failure = try row["failure"].decode(String?.self)
        run.counts = ReconciliationCounts(values: try ReconciliationCounts.columns.map { try row[$0].decode(Int.self) })
        return run
    }

    public func lapsedSubscriptions(
        bundleID: String, environment: AppStoreEnvironment, endedFrom start: Date, before end: Date,
        after cursor: LapsedSubscription?, limit: Int
    ) async throws -> [LapsedSubscription] {
        guard limit > 0 else { return [] }
        let from = ms(cursor?.expiresDate ?? start)
        var binds = PostgresBindings(capacity: 7)
        binds.append(bundleID)
        binds.append(environment.rawValue)
        binds.append(from)
        binds.append(ms(end))
        binds.append(from)
        binds.append(cursor?.transactionID ?? "")
        binds.append(Int64(limit))
        return try await rows(
            PostgresQuery(unsafeSQL: LedgerSchema.lapsedSubscriptionsQuery(placeholder: { "$\($0)" }), binds: binds)
        ).map { row in
            let (original, transaction, expires) = try row.decode((String, String, Int64).self)
            return LapsedSubscription(
                originalTransactionID: original, transactionID: transaction, expiresDate: LedgerTime.date(expires))
        }
    }

    public func notificationCheckpoint(bundleID: String, environment: AppStoreEnvironment) async throws -> Date? {
        try await rows(
            """
            SELECT read_until FROM notification_checkpoints
            WHERE bundle_id = \(bundleID) AND environment = \(environment.rawValue)
            """
        ).first.map { date(try $0.decode(Int64.self)) }
    }

    public func advanceNotificationCheckpoint(
        bundleID: String, environment: AppStoreEnvironment, to readUntil: Date, at date: Date
    ) async throws {
        try await written(
            """
            INSERT INTO notification_checkpoints (bundle_id, environment, read_until, updated_at)
            VALUES (\(bundleID), \(environment.rawValue), \(ms(readUntil)), \(ms(date)))
            ON CONFLICT (bundle_id, environment) DO UPDATE SET
                read_until = GREATEST(notification_checkpoints.read_until, excluded.read_until),
                updated_at = excluded.updated_at
            """)
    }

    // MARK: Webhooks outbox

    /// Counts the failed attempts waiting for their retry (from the index of due retries) and the
    /// events at or above the endpoint's mark that were never attempted. The mark is read first and
    /// written into the count as a number: planned for any mark, the count would read every event.
    public func undeliveredEventCount(endpoint: String) async throws -> Int {
        let mark =
            try await rows("SELECT attempted_below::TEXT FROM event_cursors WHERE endpoint = \(endpoint)")
            .first?.decode(String.self)
        guard let below = UInt64(mark ?? "0") else {
            throw LedgerStoreError(.inconsistentState, "the webhook mark of \(endpoint) is not a transaction ID")
        }
        return try await rows(
            """
            SELECT (SELECT COUNT(*) FROM event_deliveries
                    WHERE endpoint = \(endpoint) AND next_attempt_at IS NOT NULL AND delivered_at IS NULL)
                 + (SELECT COUNT(*) FROM events e
                    WHERE e.xid >= '\(unescaped: String(below))'::xid8
                      AND NOT EXISTS (
                          SELECT 1 FROM event_deliveries d WHERE d.event_id = e.id AND d.endpoint = \(endpoint)))
            """
        ).first?.decode(Int.self) ?? 0
    }

    /// Takes the due events for `endpoint`, oldest first, in one statement: failed attempts whose
    /// retry is due (from their index) and events at or above the endpoint's mark never attempted,
    /// neither under a live lease, each read only as far as the limit and locked unless another
    /// claim holds them (`FOR UPDATE … SKIP LOCKED`); a lease is written for the oldest of them
    /// unless a live one exists (checked on the latest committed lease). Only the events leased by
    /// this call are returned.
    public func claimDueEvents(endpoint: String, now: Date, limit: Int, leaseUntil: Date) async throws -> [LedgerEvent]
    {
        guard limit > 0 else { return [] }
        let (current, until) = (ms(now), ms(leaseUntil))
        guard until > current else { throw LedgerStoreError(.invalidArgument, "a lease must end after now") }
        return try await written(
            """
            WITH retries AS (
                SELECT e.id FROM event_deliveries d JOIN events e ON e.id = d.event_id
                WHERE d.endpoint = \(endpoint) AND d.next_attempt_at <= \(current) AND d.delivered_at IS NULL
                  AND NOT EXISTS (SELECT 1 FROM event_leases l
                                  WHERE l.event_id = d.event_id AND l.endpoint = \(endpoint) AND l.leased_until > \(current))
                ORDER BY d.next_attempt_at LIMIT \(Int64(limit)) FOR UPDATE OF e SKIP LOCKED),
            fresh AS (
                SELECT e.id FROM events e
                WHERE e.xid >= COALESCE(
                        (SELECT attempted_below FROM event_cursors WHERE endpoint = \(endpoint)), '0')
                  AND NOT EXISTS (SELECT 1 FROM event_deliveries d WHERE d.event_id = e.id AND d.endpoint = \(endpoint))
                  AND NOT EXISTS (SELECT 1 FROM event_leases l
                                  WHERE l.event_id = e.id AND l.endpoint = \(endpoint) AND l.leased_until > \(current))
                ORDER BY e.xid, e.id LIMIT \(Int64(limit)) FOR UPDATE OF e SKIP LOCKED),
            due AS (
                SELECT id FROM (SELECT id FROM retries UNION ALL SELECT id FROM fresh) candidates
                ORDER BY id LIMIT \(Int64(limit))),
            leased AS (
                INSERT INTO event_leases (event_id, endpoint, leased_until) SELECT id, \(endpoint), \(until) FROM due
                ON CONFLICT (event_id, endpoint) DO UPDATE SET leased_until = excluded.leased_until
                WHERE event_leases.leased_until <= \(current)
                RETURNING event_id)
            SELECT e.id, e.type, e.bundle_id, e.app_user_id, e.payload, e.created_at
            FROM events e JOIN leased ON leased.event_id = e.id ORDER BY e.id
            """
        ).map { row in
            let (id, type, bundle, user, payload, created) = try row.decode(
                (Int64, String, String, String?, String, Int64).self)
            return LedgerEvent(
                id: id, type: type, bundleID: bundle, appUserID: user, payload: Data(payload.utf8),
                createdAt: date(created))
        }
    }

    /// One upsert per attempt and one delete of the leases, in one write transaction.
    public func markDeliveries(_ attempts: [DeliveryAttempt], endpoint: String) async throws {
        guard !attempts.isEmpty else { return }
        try await write { connection in
            for attempt in attempts {
                let attempted = ms(attempt.date)
                let next = attempt.delivered ? nil : attempt.retryAt.map(ms)
                _ = try await connection.rows(
                    """
                    INSERT INTO event_deliveries
                        (event_id, endpoint, attempts, last_attempt_at, delivered_at, next_attempt_at)
                    VALUES (\(attempt.eventID), \(endpoint), 1, \(attempted), \(attempt.delivered ? attempted : nil),
                        \(next))
                    ON CONFLICT (event_id, endpoint) DO UPDATE SET attempts = event_deliveries.attempts + 1,
                        last_attempt_at = excluded.last_attempt_at,
                        delivered_at = COALESCE(event_deliveries.delivered_at, excluded.delivered_at),
                        next_attempt_at = CASE
                            WHEN event_deliveries.delivered_at IS NULL AND excluded.delivered_at IS NULL
                            THEN excluded.next_attempt_at END
                    """)
            }
            _ = try await connection.rows(
                "DELETE FROM event_leases WHERE endpoint = \(endpoint) AND event_id = ANY(\(attempts.map(\.eventID)))")
            // The mark moves up to the transaction of the first event never attempted, and never past
            // a transaction still running (`pg_snapshot_xmin`): the events of older transactions are
            // all visible now, and no event will ever be written by one of them again.
            _ = try await connection.rows(
                """
                WITH mark AS (
                    SELECT COALESCE((SELECT attempted_below FROM event_cursors WHERE endpoint = \(endpoint)), '0') AS below),
                horizon AS (SELECT pg_snapshot_xmin(pg_current_snapshot()) AS xid)
                INSERT INTO event_cursors (endpoint, attempted_below)
                SELECT \(endpoint), LEAST(horizon.xid, COALESCE((
                    SELECT e.xid FROM events e
                    WHERE e.xid >= mark.below
                      AND NOT EXISTS (SELECT 1 FROM event_deliveries d WHERE d.event_id = e.id AND d.endpoint = \(endpoint))
                    ORDER BY e.xid, e.id LIMIT 1), horizon.xid))
                FROM mark, horizon
                ON CONFLICT (endpoint) DO UPDATE SET
                    attempted_below = GREATEST(event_cursors.attempted_below, excluded.attempted_below)
                """)
        }
    }

    // MARK: Hosted content

    public func putContent(_ package: ContentPackage, bytes: Data) async throws {
        let digest = try LedgerRules.validateContent(package, bytes: bytes)
        let (bundleID, productID, version) = (package.bundleID, package.productID, package.version)
        try await write { connection in
            let inserted = try await connection.rows(
                """
                INSERT INTO content_packages (bundle_id, product_id, version, sha256, size, bytes, uploaded_at)
                VALUES (\(bundleID), \(productID), \(version), \(digest), \(package.size), \(bytes),
                    \(ms(package.uploadedAt)))
                ON CONFLICT (bundle_id, product_id, version) DO NOTHING RETURNING version
                """)
            let stored = try await connection.rows(
                """
                SELECT sha256 FROM content_packages
                WHERE bundle_id = \(bundleID) AND product_id = \(productID) AND version = \(version)
                """
            ).first?.decode(String.self)
            guard !inserted.isEmpty || stored == digest else {
                throw LedgerStoreError(
                    .contentVersionConflict, "content \(productID) \(version) was already uploaded with other bytes")
            }
        }
    }

    public func latestContent(bundleID: String, productID: String) async throws -> (ContentPackage, Data)? {
        let found = try await rows(
            """
            SELECT version, sha256, size, bytes, uploaded_at FROM content_packages
            WHERE bundle_id = \(bundleID) AND product_id = \(productID) ORDER BY uploaded_at DESC, version DESC LIMIT 1
            """
        ).first?.decode((String, String, Int64, Data, Int64).self)
        guard let (version, sha256, size, bytes, uploaded) = found else { return nil }
        let package = ContentPackage(
            bundleID: bundleID, productID: productID, version: version, sha256: sha256, size: size,
            uploadedAt: date(uploaded))
        return (package, bytes)
    }

    // MARK: Dashboard sessions

    public func insertDashboardToken(
        digest: Data, kind: DashboardTokenKind, csrf: String?, scope: DashboardScope?, expires: Date, now: Date
    ) async throws -> Bool {
        try await write { connection in
            _ = try await connection.rows("DELETE FROM dashboard_tokens WHERE expires_at <= \(ms(now))")
            return try await !connection.rows(
                """
                INSERT INTO dashboard_tokens (digest, kind, csrf, apps, expires_at)
                VALUES (\(digest), \(kind.rawValue), \(csrf), \(scope?.stored), \(ms(expires)))
                ON CONFLICT (digest) DO NOTHING RETURNING digest
                """
            ).isEmpty
        }
    }

    public func dashboardToken(
        digest: Data, kind: DashboardTokenKind, now: Date
    ) async throws -> (csrf: String?, scope: DashboardScope?, expires: Date)? {
        try await rows(
            """
            SELECT csrf, apps, expires_at FROM dashboard_tokens
            WHERE digest = \(digest) AND kind = \(kind.rawValue) AND expires_at > \(ms(now))
            """
        ).first.map { row in
            let (csrf, apps, expires) = try row.decode((String?, String?, Int64).self)
            return (csrf, DashboardScope(stored: apps), date(expires))
        }
    }

    public func deleteDashboardToken(digest: Data) async throws {
        try await written("DELETE FROM dashboard_tokens WHERE digest = \(digest)")
    }

    // MARK: Failed sign-ins

    /// One row per subject, raised by an upsert, so servers sharing the database count together;
    /// subjects quiet for the policy's window are forgotten on the way.
    public func recordSignInFailure(
        _ subject: SignInSubject, policy: SignInThrottlePolicy, now: Date
    ) async throws -> SignInFailureCount {
        let cutoff = ms(now) - Int64(policy.windowSeconds) * 1000
        return try await write { connection in
            _ = try await connection.rows(
                "DELETE FROM sign_in_failures WHERE last_failure_at < \(cutoff) AND locked_until < \(cutoff)")
            let counted = try await connection.rows(
                """
                INSERT INTO sign_in_failures (subject, failures, last_failure_at, locked_until)
                VALUES (\(subject.key), 1, \(ms(now)), 0)
                ON CONFLICT (subject) DO UPDATE SET last_failure_at = excluded.last_failure_at, failures = CASE
                    WHEN sign_in_failures.last_failure_at < \(cutoff) AND sign_in_failures.locked_until < \(cutoff)
                    THEN 1
                    ELSE sign_in_failures.failures + 1 END
                RETURNING failures, locked_until
                """)
            guard let (failures, locked) = try counted.first?.decode((Int, Int64).self) else {
                throw LedgerStoreError(.inconsistentState, "the failure counted for \(subject.key) is not stored")
            }
            var lockedUntil = date(locked)
            let wait = policy.waitSeconds(afterFailures: failures, of: subject)
            let until = now.addingTimeInterval(TimeInterval(wait))
            if wait > 0, until > lockedUntil {
                lockedUntil = until
                _ = try await connection.rows(
                    "UPDATE sign_in_failures SET locked_until = \(ms(until)) WHERE subject = \(subject.key)")
            }
            return SignInFailureCount(subject: subject, failures: failures, lockedUntil: lockedUntil)
        }
    }

    public func signInLockedUntil(_ subjects: [SignInSubject], now: Date) async throws -> Date? {
        let latest = try await rows(
            """
            SELECT MAX(locked_until) FROM sign_in_failures
            WHERE subject = ANY(\(subjects.map(\.key))) AND locked_until > \(ms(now))
            """
        ).first?.decode(Int64?.self)
        return (latest ?? nil).map(date)
    }

    @discardableResult
    public func clearSignInFailures(_ subject: SignInSubject?) async throws -> Int {
        try await written(
            "DELETE FROM sign_in_failures WHERE \(subject?.key)::TEXT IS NULL OR subject = \(subject?.key) RETURNING 1"
        ).count
    }

    public func signInFailures() async throws -> [SignInFailureCount] {
        try await rows(
            """
            SELECT subject, failures, last_failure_at, locked_until FROM sign_in_failures
            ORDER BY locked_until DESC, last_failure_at DESC
            """
        ).compactMap { row in
            let (key, failures, last, locked) = try row.decode((String, Int, Int64, Int64).self)
            return SignInSubject(key: key).map {
                SignInFailureCount(subject: $0, failures: failures, lockedUntil: date(locked), lastFailure: date(last))
            }
        }
    }

    // MARK: Offers and calls owed to Apple

    public func recordOfferSignature(_ record: OfferSignatureRecord) async throws {
        let inserted = try await written(
            for: record.appUserID,
            """
            INSERT INTO offer_signatures (nonce, bundle_id, app_user_id, product_id, offer_id, kind, key_id, created_at)
            VALUES (\(record.nonce), \(record.bundleID), \(record.appUserID), \(record.productID), \(record.offerID),
                \(record.kind.rawValue), \(record.keyID), \(ms(record.createdAt)))
            ON CONFLICT (nonce) DO NOTHING RETURNING nonce
            """)
        guard !inserted.isEmpty else {
            throw LedgerStoreError(.invalidArgument, "an offer signature with nonce \(record.nonce) exists already")
        }
    }

    public func offerSignatures(bundleID: String?, limit: Int) async throws -> [OfferSignatureRecord] {
        try await rows(
            """
            SELECT nonce, bundle_id, app_user_id, product_id, offer_id, kind, key_id, created_at FROM offer_signatures
            WHERE \(bundleID)::TEXT IS NULL OR bundle_id = \(bundleID)
            ORDER BY created_at DESC, nonce LIMIT \(Int64(limit))
            """
        ).map { row in
            let (nonce, bundle, user, product, offer, kind, key, created) = try row.decode(
                (String, String, String, String, String?, String, String, Int64).self)
            return OfferSignatureRecord(
                nonce: nonce, bundleID: bundle, appUserID: user, productID: product, offerID: offer,
                kind: OfferSigningRequest.Kind(rawValue: kind) ?? .promotional, keyID: key, createdAt: date(created))
        }
    }

    public func recordAppleRequest(_ request: AppleRequestRecord) async throws -> Bool {
        try await write { connection in try await Self.insert(request, on: connection) }
    }

    /// Writes a call owed to Apple in the transaction open on `connection`; `false` when its ID is known.
    static func insert(_ request: AppleRequestRecord, on connection: PostgresConnection) async throws -> Bool {
        try await !connection.rows(
            """
            INSERT INTO apple_requests (id, kind, bundle_id, transaction_id, environment, detail, requested_at, state,
                next_attempt_at, last_error, finished_at)
            VALUES (\(request.id), \(request.kind.rawValue), \(request.bundleID), \(request.transactionID),
                \(request.environment.rawValue), \(request.detail), \(ms(request.requestedAt)),
                \(request.state.rawValue), \(ms(request.nextAttemptAt)), \(request.lastError),
                \(request.finishedAt.map(ms)))
            ON CONFLICT (id) DO NOTHING RETURNING id
            """
        ).isEmpty
    }

    private static let appleRequestColumns = """
        id, kind, bundle_id, transaction_id, environment, detail, requested_at, state, attempts, next_attempt_at,
        sent_body, last_error, finished_at
        """

    /// Takes up to `limit` pending calls due at `now`, leased until `leaseUntil`, each counting one
    /// more attempt. Rows another server is claiming are skipped (`FOR UPDATE SKIP LOCKED`), and
    /// the lease is checked again on the row itself.
    public func claimDueAppleRequests(now: Date, limit: Int, leaseUntil: Date) async throws -> [AppleRequestRecord] {
        try await written(
            """
            UPDATE apple_requests SET leased_until = \(ms(leaseUntil)), attempts = attempts + 1
            WHERE id IN (
                SELECT id FROM apple_requests
                WHERE state = 'pending' AND next_attempt_at <= \(ms(now)) AND leased_until <= \(ms(now))
                ORDER BY next_attempt_at LIMIT \(Int64(limit)) FOR UPDATE SKIP LOCKED)
              AND state = 'pending' AND leased_until <= \(ms(now))
            RETURNING \(unescaped: Self.appleRequestColumns)
            """
        ).map(Self.appleRequest)
    }

    public func finishAppleRequest(
        _ id: String, state: AppleRequestRecord.State, sentBody: String?, error: String?, retryAt: Date?, at date: Date
    ) async throws {
        try await written(
            """
            UPDATE apple_requests SET state = \(state.rawValue), sent_body = \(sentBody), last_error = \(error),
                next_attempt_at = \(retryAt.map(ms) ?? 0), finished_at = \(state == .pending ? nil : ms(date)),
                leased_until = 0
            WHERE id = \(id)
            """)
    }

    public func appleRequests(bundleID: String?, limit: Int) async throws -> [AppleRequestRecord] {
        try await rows(
            """
            SELECT \(unescaped: Self.appleRequestColumns) FROM apple_requests
            WHERE \(bundleID)::TEXT IS NULL OR bundle_id = \(bundleID)
            ORDER BY requested_at DESC, id LIMIT \(Int64(limit))
            """
        ).map(Self.appleRequest)
    }

    private static func appleRequest(_ row: PostgresRow) throws -> AppleRequestRecord {
        let (
            id, kind, bundle, transaction, environment, detail, requested, state, attempts, next, sent, error, finished
        ) =
            try row.decode(
                (String, String, String, String, String, String?, Int64, String, Int, Int64, String?, String?, Int64?)
                    .self)
        return AppleRequestRecord(
            id: id, kind: AppleRequestRecord.Kind(rawValue: kind) ?? .consumptionInformation, bundleID: bundle,
            transactionID: transaction, environment: AppStoreEnvironment(rawValue: environment), detail: detail,
            requestedAt: date(requested), state: AppleRequestRecord.State(rawValue: state) ?? .failed,
            attempts: attempts,
            nextAttemptAt: date(next), sentBody: sent, lastError: error, finishedAt: finished.map(date))
    }

    // MARK: Customers and app downloads

    public func aliasedCustomer(bundleID: String, anonymousID: String) async throws -> String? {
        try await rows(
            "SELECT app_user_id FROM customer_aliases WHERE bundle_id = \(bundleID) AND alias = \(anonymousID)"
        )
        .first?.decode(String.self)
    }

    public func linkAppTransaction(
        bundleID: String, appTransactionID: String, appUserID: String, environment: AppStoreEnvironment, at date: Date
    ) async throws {
        try await written(
            for: appUserID,
            """
            INSERT INTO app_transactions (bundle_id, app_transaction_id, app_user_id, environment, linked_at)
            VALUES (\(bundleID), \(appTransactionID), \(appUserID), \(environment.rawValue), \(ms(date)))
            ON CONFLICT (bundle_id, app_transaction_id) DO UPDATE SET
                app_user_id = excluded.app_user_id, environment = excluded.environment, linked_at = excluded.linked_at
            """)
    }

    public func appTransactions(
        bundleID: String, appUserID: String
    ) async throws -> [(appTransactionID: String, linkedAt: Date)] {
        try await rows(
            """
            SELECT app_transaction_id, linked_at FROM app_transactions
            WHERE bundle_id = \(bundleID) AND app_user_id = \(appUserID)
            ORDER BY linked_at DESC, app_transaction_id LIMIT 50
            """
        ).map { row in
            let (id, linked) = try row.decode((String, Int64).self)
            return (id, date(linked))
        }
    }

    public func appTransactionCustomer(bundleID: String, appTransactionID: String) async throws -> String? {
        try await rows(
            """
            SELECT app_user_id FROM app_transactions
            WHERE bundle_id = \(bundleID) AND app_transaction_id = \(appTransactionID)
            """
        ).first?.decode(String.self)
    }

    // MARK: Subscription renewals

    /// One upsert: a known subscription's state is replaced only by one signed later, keeping the
    /// first date of a billing problem that goes on.
    /// A grace period it reports is kept in `metric_grace` (and its subscription marked for the
    /// metrics job) by the same statement.
    public func recordRenewal(_ renewal: SubscriptionRenewal) async throws -> Bool {
        try await !written(
            """
            WITH grace AS (
                INSERT INTO metric_grace (bundle_id, original_transaction_id, expires_at, period_expires_at)
                SELECT \(renewal.bundleID), \(renewal.originalTransactionID), expires, period
                FROM (SELECT \(renewal.gracePeriodExpiresAt.map(ms))::BIGINT AS expires,
                    \(renewal.periodExpiresAt.map(ms))::BIGINT AS period) g
                WHERE expires IS NOT NULL
                ON CONFLICT (bundle_id, original_transaction_id, expires_at) DO UPDATE SET
                    period_expires_at = excluded.period_expires_at
                WHERE metric_grace.period_expires_at IS NULL AND excluded.period_expires_at IS NOT NULL
                RETURNING bundle_id, original_transaction_id),
            marked AS (
                INSERT INTO metric_pending (bundle_id, original_transaction_id)
                SELECT bundle_id, original_transaction_id FROM grace
                \(unescaped: MetricStatements.markConflict))
            INSERT INTO subscription_renewals (bundle_id, original_transaction_id, auto_renew_status, expiration_intent,
                billing_issue_detected_at, grace_period_expires_at, signed_date, notification_uuid, updated_at)
            VALUES (\(renewal.bundleID), \(renewal.originalTransactionID), \(renewal.autoRenewStatus?.rawValue),
                \(renewal.expirationIntent?.rawValue), \(renewal.billingIssueDetectedAt.map(ms)),
                \(renewal.gracePeriodExpiresAt.map(ms)), \(ms(renewal.signedDate)), \(renewal.notificationUUID),
                \(ms(renewal.updatedAt)))
            ON CONFLICT (bundle_id, original_transaction_id) DO UPDATE SET
                auto_renew_status = excluded.auto_renew_status, expiration_intent = excluded.expiration_intent,
                billing_issue_detected_at = CASE WHEN excluded.billing_issue_detected_at IS NOT NULL THEN
                    COALESCE(subscription_renewals.billing_issue_detected_at, excluded.billing_issue_detected_at) END,
                grace_period_expires_at = excluded.grace_period_expires_at, signed_date = excluded.signed_date,
                notification_uuid = excluded.notification_uuid, updated_at = excluded.updated_at
            WHERE subscription_renewals.signed_date < excluded.signed_date
            RETURNING original_transaction_id
            """
        ).isEmpty
    }

    public func subscriptionRenewals(
        bundleID: String, originalTransactionIDs: [String]
    ) async throws -> [String: SubscriptionRenewal] {
        guard !originalTransactionIDs.isEmpty else { return [:] }
        var renewals: [String: SubscriptionRenewal] = [:]
        for row in try await rows(
            """
            SELECT original_transaction_id, auto_renew_status, expiration_intent, billing_issue_detected_at,
                grace_period_expires_at, signed_date, notification_uuid, updated_at
            FROM subscription_renewals
            WHERE bundle_id = \(bundleID) AND original_transaction_id = ANY(\(originalTransactionIDs))
            """)
        {
            let (id, status, intent, billing, grace, signed, notification, updated) = try row.decode(
                (String, Int?, Int?, Int64?, Int64?, Int64, String?, Int64).self)
            renewals[id] = SubscriptionRenewal(
                bundleID: bundleID, originalTransactionID: id,
                autoRenewStatus: status.map(AutoRenewStatus.init(rawValue:)),
                expirationIntent: intent.map(ExpirationIntent.init(rawValue:)),
                billingIssueDetectedAt: billing.map(date),
                gracePeriodExpiresAt: grace.map(date), signedDate: date(signed), notificationUUID: notification,
                updatedAt: date(updated))
        }
        return renewals
    }
}

/// Instants as the ledger stores them (``LedgerTime``), short for the statements.
func ms(_ date: Date) -> Int64 { LedgerTime.milliseconds(date) }
func date(_ milliseconds: Int64) -> Date { LedgerTime.date(milliseconds) }
