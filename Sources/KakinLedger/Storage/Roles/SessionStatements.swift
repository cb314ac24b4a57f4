import Foundation

/// A row of `dashboard_tokens`: a dashboard session or a used sign-in form, by its token's SHA-256.
struct DashboardTokenRecord: LedgerRecord {
    static let table = "dashboard_tokens"
    typealias Columns = CodingKeys

    var digest: Data
    var kind: String
    var csrf: String?
    var expiresAt: Int64
    /// The apps a session opens, as ``DashboardScope/stored`` writes them; `NULL` for a sign-in form.
    var apps: String?

    enum CodingKeys: String, CodingKey, CaseIterable {
        case digest, kind, csrf
        case expiresAt = "expires_at"
        case apps
    }
}

/// A row of `sign_in_failures`: the failed sign-ins counted against one subject.
struct SignInFailureRecord: LedgerRecord {
    static let table = "sign_in_failures"
    typealias Columns = CodingKeys

    var subject: String
    var failures: Int
    var lastFailureAt: Int64
    var lockedUntil: Int64

    enum CodingKeys: String, CodingKey, CaseIterable {
        case subject, failures
        case lastFailureAt = "last_failure_at"
        case lockedUntil = "locked_until"
    }
}

/// Dashboard sessions and failed sign-ins, the same statements on both engines.
extension StatementEngine {
    public func insertDashboardToken(
        digest: Data, kind: DashboardTokenKind, csrf: String?, scope: DashboardScope?, expires: Date, now: Date
    ) async throws -> Bool {
        let token = DashboardTokenRecord(
            digest: digest, kind: kind.rawValue, csrf: csrf, expiresAt: LedgerTime.milliseconds(expires),
            apps: scope?.stored)
        let insert: LedgerSQL = try "INSERT INTO \(insert: token) ON CONFLICT (digest) DO NOTHING RETURNING digest"
        return try await perform(
            for: nil,
            .run(["DELETE FROM dashboard_tokens WHERE expires_at <= \(now)", insert]) { .done(!$0[1].isEmpty) })
    }

    public func dashboardToken(
        digest: Data, kind: DashboardTokenKind, now: Date
    ) async throws -> (csrf: String?, scope: DashboardScope?, expires: Date)? {
        try await read(
            """
            SELECT \(unescaped: DashboardTokenRecord.selection()) FROM dashboard_tokens
            WHERE digest = \(digest) AND kind = \(kind.rawValue) AND expires_at > \(now)
            """, as: DashboardTokenRecord.self
        ).first.map { ($0.csrf, DashboardScope(stored: $0.apps), LedgerTime.date($0.expiresAt)) }
    }

    public func deleteDashboardToken(digest: Data) async throws {
        try await write("DELETE FROM dashboard_tokens WHERE digest = \(digest)")
    }

    /// Counts one failed sign-in against `subject` (one row per subject, raised by an upsert, so
    /// servers sharing the database count together) and returns its count and the instant it must
    /// wait until, as `policy` says. Failures are forgotten once the subject has been quiet for
    /// the policy's window.
    public func recordSignInFailure(
        _ subject: SignInSubject, policy: SignInThrottlePolicy, now: Date
    ) async throws -> SignInFailureCount {
        let cutoff = LedgerTime.milliseconds(now) - Int64(policy.windowSeconds) * 1000
        let first = SignInFailureRecord(
            subject: subject.key, failures: 1, lastFailureAt: LedgerTime.milliseconds(now), lockedUntil: 0)
        let counted: LedgerSQL = try """
            INSERT INTO \(insert: first)
            ON CONFLICT (subject) DO UPDATE SET last_failure_at = excluded.last_failure_at, failures = CASE
                WHEN sign_in_failures.last_failure_at < \(cutoff) AND sign_in_failures.locked_until < \(cutoff)
                THEN 1
                ELSE sign_in_failures.failures + 1 END
            RETURNING \(unescaped: SignInFailureRecord.selection())
            """
        return try await perform(
            for: nil,
            .run(["DELETE FROM sign_in_failures WHERE last_failure_at < \(cutoff) AND locked_until < \(cutoff)", counted])
            { rows in
                guard let stored = try rows[1].first(SignInFailureRecord.self) else {
                    throw LedgerStoreError(.inconsistentState, "the failure counted for \(subject.key) is not stored")
                }
                let wait = policy.waitSeconds(afterFailures: stored.failures, of: subject)
                let until = now.addingTimeInterval(TimeInterval(wait))
                let count = SignInFailureCount(
                    subject: subject, failures: stored.failures, lockedUntil: LedgerTime.date(stored.lockedUntil))
                guard wait > 0, until > count.lockedUntil else { return .done(count) }
                return .run(["UPDATE sign_in_failures SET locked_until = \(until) WHERE subject = \(subject.key)"]) {
                    _ in .done(SignInFailureCount(subject: subject, failures: stored.failures, lockedUntil: until))
                }
            })
    }

    public func signInLockedUntil(_ subjects: [SignInSubject], now: Date) async throws -> Date? {
        guard !subjects.isEmpty else { return nil }
        return try await value(
            """
            SELECT MAX(locked_until) AS value FROM sign_in_failures
            WHERE subject IN (\(list: subjects.map(\.key))) AND locked_until > \(now)
            """, as: Int64?.self
        )?.map(LedgerTime.date)
    }

    @discardableResult
    public func clearSignInFailures(_ subject: SignInSubject?) async throws -> Int {
        try await write("DELETE FROM sign_in_failures \(where: ["subject": subject?.key]) RETURNING subject")
    }

    public func signInFailures() async throws -> [SignInFailureCount] {
        try await read(
            """
            SELECT \(unescaped: SignInFailureRecord.selection()) FROM sign_in_failures
            ORDER BY locked_until DESC, last_failure_at DESC
            """, as: SignInFailureRecord.self
        ).compactMap { row in
            SignInSubject(key: row.subject).map {
                SignInFailureCount(
                    subject: $0, failures: row.failures, lockedUntil: LedgerTime.date(row.lockedUntil),
                    lastFailure: LedgerTime.date(row.lastFailureAt))
            }
        }
    }
}
