import Foundation
@testable import KakinLedger

/// The dashboard's sessions and the failed sign-ins kept in memory: ``SessionLedger`` for tests
/// of what uses the role, run without a database. Instants are kept in whole milliseconds, as the
/// engines store them.
public actor InMemorySessionLedger: SessionLedger {
    private struct Token {
        var kind: DashboardTokenKind
        var csrf: String?
        var scope: DashboardScope?
        var expires: Date
    }

    private struct Failures {
        var failures: Int
        var lastFailure: Date
        var lockedUntil: Date
    }

    private var tokens: [Data: Token] = [:]
    private var failures: [SignInSubject: Failures] = [:]

    /// An empty ledger.
    public init() {}

    public func insertDashboardToken(
        digest: Data, kind: DashboardTokenKind, csrf: String?, scope: DashboardScope?, expires: Date, now: Date
    ) async throws -> Bool {
        let now = stored(now)
        tokens = tokens.filter { $0.value.expires > now }
        guard tokens[digest] == nil else { return false }
        tokens[digest] = Token(kind: kind, csrf: csrf, scope: scope, expires: stored(expires))
        return true
    }

    public func dashboardToken(
        digest: Data, kind: DashboardTokenKind, now: Date
    ) async throws -> (csrf: String?, scope: DashboardScope?, expires: Date)? {
        guard let token = tokens[digest], token.kind == kind, token.expires > stored(now) else { return nil }
        return (token.csrf, token.scope, token.expires)
    }

    public func deleteDashboardToken(digest: Data) async throws {
        tokens[digest] = nil
    }

    public func recordSignInFailure(
        _ subject: SignInSubject, policy: SignInThrottlePolicy, now: Date
    ) async throws -> SignInFailureCount {
        let now = stored(now)
        let cutoff = now.addingTimeInterval(-TimeInterval(policy.windowSeconds))
        failures = failures.filter { !($0.value.lastFailure < cutoff && $0.value.lockedUntil < cutoff) }
        var counted = failures[subject] ?? Failures(failures: 0, lastFailure: now, lockedUntil: stored(Date(timeIntervalSince1970: 0)))
        counted.failures += 1
        counted.lastFailure = now
        let wait = policy.waitSeconds(afterFailures: counted.failures, of: subject)
        let until = now.addingTimeInterval(TimeInterval(wait))
        if wait > 0, until > counted.lockedUntil { counted.lockedUntil = until }
        failures[subject] = counted
        return SignInFailureCount(subject: subject, failures: counted.failures, lockedUntil: counted.lockedUntil)
    }

    public func signInLockedUntil(_ subjects: [SignInSubject], now: Date) async throws -> Date? {
        let now = stored(now)
        return subjects.compactMap { failures[$0]?.lockedUntil }.filter { $0 > now }.max()
    }

    @discardableResult
    public func clearSignInFailures(_ subject: SignInSubject?) async throws -> Int {
        guard let subject else {
            defer { failures = [:] }
            return failures.count
        }
        return failures.removeValue(forKey: subject) == nil ? 0 : 1
    }

    public func signInFailures() async throws -> [SignInFailureCount] {
        failures.sorted { ($0.value.lockedUntil, $0.value.lastFailure) > ($1.value.lockedUntil, $1.value.lastFailure) }
            .map {
                SignInFailureCount(
                    subject: $0.key, failures: $0.value.failures, lockedUntil: $0.value.lockedUntil,
                    lastFailure: $0.value.lastFailure)
            }
    }
}

/// `date` as the engines store it: in whole milliseconds.
func stored(_ date: Date) -> Date {
    LedgerTime.date(LedgerTime.milliseconds(date))
}
