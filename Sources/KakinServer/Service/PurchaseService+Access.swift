public import Foundation
public import KakinLedger

/// What the dashboard's sessions, the sign-in throttle and the readiness check keep in or ask of
/// the ledger: they reach it through the service only.
extension PurchaseService {
    /// Stores a dashboard token (a session with the apps it opens, or a sign-in form used once)
    /// by its digest, forgetting expired ones; `false` when that digest is stored already.
    public func insertDashboardToken(
        digest: Data, kind: DashboardTokenKind, csrf: String?, scope: DashboardScope? = nil, expires: Date, now: Date
    ) async throws -> Bool {
        try await store.insertDashboardToken(
            digest: digest, kind: kind, csrf: csrf, scope: scope, expires: expires, now: now)
    }

    /// The live token of `kind` with this digest: its form token, the apps it opens and its expiry.
    public func dashboardToken(
        digest: Data, kind: DashboardTokenKind, now: Date
    ) async throws -> (csrf: String?, scope: DashboardScope?, expires: Date)? {
        try await store.dashboardToken(digest: digest, kind: kind, now: now)
    }

    /// Forgets a dashboard token (a sign-out), for every server sharing the ledger.
    public func deleteDashboardToken(digest: Data) async throws {
        try await store.deleteDashboardToken(digest: digest)
    }

    /// Counts one more failed sign-in of `subject` and locks it as `policy` says.
    public func recordSignInFailure(
        _ subject: SignInSubject, policy: SignInThrottlePolicy, now: Date
    ) async throws -> SignInFailureCount {
        try await store.recordSignInFailure(subject, policy: policy, now: now)
    }

    /// Until when the most locked of `subjects` is locked, or `nil` when none is.
    public func signInLockedUntil(_ subjects: [SignInSubject], now: Date) async throws -> Date? {
        try await store.signInLockedUntil(subjects, now: now)
    }

    /// Forgets the failed sign-ins of `subject`, or of everyone; how many subjects were forgotten.
    @discardableResult
    public func clearSignInFailures(_ subject: SignInSubject?) async throws -> Int {
        try await store.clearSignInFailures(subject)
    }

    /// Answers when the ledger does.
    public func pingLedger() async throws {
        try await store.ping()
    }
}
