public import Foundation
import SQLKit

extension SQLLedgerStore {
    /// Counts one failed sign-in against `subject` and returns its count of failures and the
    /// instant it must wait until, as `policy` says for that count. Failures are forgotten once
    /// the subject has been quiet (no failure, no wait) for the policy's window; rows forgotten
    /// that way are deleted on the way.
    ///
    /// The count is kept in the ledger's database, so servers sharing it count together: one row
    /// per subject, raised by an upsert, so two servers counting at once both count.
    public func recordSignInFailure(
        _ subject: SignInSubject, policy: SignInThrottlePolicy, now: Date
    ) async throws -> SignInFailureCount {
        let current = LedgerTime.milliseconds(now)
        let cutoff = LedgerValue.integer(current - Int64(policy.windowSeconds) * 1000)
        let key = LedgerValue.text(subject.key)
        return try await writing { db in
            _ = try await db.run(.forgetQuietSignInFailures, cutoff, cutoff)
            _ = try await db.run(.countSignInFailure, key, .integer(current), cutoff, cutoff)
            guard let row = try await db.first(.signInFailure, key) else {
                throw LedgerStoreError(.inconsistentState, "the failure counted for \(subject.key) is not stored")
            }
            let failures = Int(try row.decode(column: "failures", as: Int64.self))
            var lockedUntil = try row.date("locked_until")
            let wait = policy.waitSeconds(afterFailures: failures, of: subject)
            if wait > 0 {
                let until = now.addingTimeInterval(TimeInterval(wait))
                if until > lockedUntil {
                    lockedUntil = until
                    _ = try await db.run(.lockSignIn, .integer(LedgerTime.milliseconds(until)), key)
                }
            }
            return SignInFailureCount(subject: subject, failures: failures, lockedUntil: lockedUntil)
        }
    }

    /// The latest instant any of `subjects` must wait until, or `nil` when none of them waits now.
    public func signInLockedUntil(_ subjects: [SignInSubject], now: Date) async throws -> Date? {
        var latest: Date?
        for subject in subjects {
            let values: [LedgerValue] = [.text(subject.key), .integer(LedgerTime.milliseconds(now))]
            let row = try await readingStatement { db in try await db.run(.signInLock, values: values).first }
            if let row {
                let until = try row.date("locked_until")
                if latest.map({ until > $0 }) ?? true { latest = until }
            }
        }
        return latest
    }

    /// Forgets the failures of `subject` (every subject when `nil`): its wait ends at once, on
    /// every server. Returns how many subjects were forgotten.
    @discardableResult
    public func clearSignInFailures(_ subject: SignInSubject?) async throws -> Int {
        try await writing { db in
            if let subject {
                return try await db.run(.clearSignInFailure, .text(subject.key)).count
            }
            return try await db.run(.clearAllSignInFailures).count
        }
    }

    /// Every subject with failures counted, the ones waiting first, then by their latest failure.
    public func signInFailures() async throws -> [SignInFailureCount] {
        let rows = try await readingStatement { db in try await db.run(.allSignInFailures) }
        return try rows.compactMap { row in
            guard let subject = SignInSubject(key: try row.decode(column: "subject", as: String.self)) else {
                return nil
            }
            return SignInFailureCount(
                subject: subject, failures: Int(try row.decode(column: "failures", as: Int64.self)),
                lockedUntil: try row.date("locked_until"), lastFailure: try row.date("last_failure_at"))
        }
    }
}

extension LedgerStatement {
    static let forgetQuietSignInFailures = LedgerStatement(
        "DELETE FROM sign_in_failures WHERE last_failure_at < ? AND locked_until < ?")
    static let countSignInFailure = LedgerStatement(
        """
        INSERT INTO sign_in_failures (subject, failures, last_failure_at, locked_until) VALUES (?, 1, ?, 0)
        ON CONFLICT (subject) DO UPDATE SET
            failures = CASE
                WHEN sign_in_failures.last_failure_at < ? AND sign_in_failures.locked_until < ? THEN 1
                ELSE sign_in_failures.failures + 1
            END,
            last_failure_at = excluded.last_failure_at
        """)
    static let signInFailure = LedgerStatement(
        "SELECT failures, locked_until FROM sign_in_failures WHERE subject = ?")
    static let lockSignIn = LedgerStatement("UPDATE sign_in_failures SET locked_until = ? WHERE subject = ?")
    static let signInLock = LedgerStatement(
        "SELECT locked_until FROM sign_in_failures WHERE subject = ? AND locked_until > ?")
    static let clearSignInFailure = LedgerStatement(
        "DELETE FROM sign_in_failures WHERE subject = ? RETURNING subject")
    static let clearAllSignInFailures = LedgerStatement("DELETE FROM sign_in_failures RETURNING subject")
    static let allSignInFailures = LedgerStatement(
        """
        SELECT subject, failures, last_failure_at, locked_until FROM sign_in_failures
        ORDER BY locked_until DESC, last_failure_at DESC
        """)
}
