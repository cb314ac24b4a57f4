public import Foundation

/// The dashboard's sessions (stored by their tokens' SHA-256) and the failed sign-ins counted
/// against each subject.
///
/// One role of ``LedgerStore``.
public protocol SessionLedger: Sendable {
    /// Stores a dashboard token by its SHA-256 (forgetting expired ones), with the apps a session
    /// opens (`nil` for a used sign-in form); `false` when one with that digest is stored already.
    func insertDashboardToken(
        digest: Data, kind: DashboardTokenKind, csrf: String?, scope: DashboardScope?, expires: Date, now: Date
    ) async throws -> Bool

    /// The live token of `kind` with this digest: its CSRF token, the apps it opens (`nil`: none)
    /// and when it expires.
    func dashboardToken(
        digest: Data, kind: DashboardTokenKind, now: Date
    ) async throws -> (csrf: String?, scope: DashboardScope?, expires: Date)?

    /// Forgets a token.
    func deleteDashboardToken(digest: Data) async throws

    /// Counts a failed sign-in against `subject`; its count and until when it must wait.
    func recordSignInFailure(
        _ subject: SignInSubject, policy: SignInThrottlePolicy, now: Date
    ) async throws -> SignInFailureCount

    /// The latest instant one of `subjects` must wait until, or `nil`.
    func signInLockedUntil(_ subjects: [SignInSubject], now: Date) async throws -> Date?

    /// Forgets the failures of `subject`, or of every subject; how many were forgotten.
    @discardableResult
    func clearSignInFailures(_ subject: SignInSubject?) async throws -> Int

    /// Every subject with failures counted.
    func signInFailures() async throws -> [SignInFailureCount]
}
