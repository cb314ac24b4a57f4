public import Foundation
import SQLKit

extension SQLLedgerStore {
    /// Stores a dashboard token (a session, or a sign-in form once used) by the SHA-256 of its
    /// value, and forgets expired ones. `false` when a token with that digest is stored already
    /// (a form used twice): nothing changes then.
    public func insertDashboardToken(
        digest: Data, kind: DashboardTokenKind, csrf: String?, expires: Date, now: Date
    ) async throws -> Bool {
        let values: [LedgerValue] = [
            .blob(digest), .text(kind.rawValue), .text(csrf), .integer(LedgerTime.milliseconds(expires)),
        ]
        let cutoff = LedgerValue.integer(LedgerTime.milliseconds(now))
        return try await writing { db in
            _ = try await db.run(.forgetExpiredDashboardTokens, cutoff)
            return try await db.wrote(.insertDashboardToken, values: values)
        }
    }

    /// The live token of `kind` with this digest: its CSRF token and when it expires.
    public func dashboardToken(
        digest: Data, kind: DashboardTokenKind, now: Date
    ) async throws -> (csrf: String?, expires: Date)? {
        let values: [LedgerValue] = [.blob(digest), .text(kind.rawValue), .integer(LedgerTime.milliseconds(now))]
        guard let row = try await readingStatement({ db in try await db.run(.dashboardToken, values: values).first })
        else { return nil }
        return (try row.optional("csrf", as: String.self), try row.date("expires_at"))
    }

    /// Forgets a token (sign-out): every server stops accepting it.
    public func deleteDashboardToken(digest: Data) async throws {
        try await writing { db in _ = try await db.run(.deleteDashboardToken, .blob(digest)) }
    }
}

/// What a stored dashboard token is.
public enum DashboardTokenKind: String, Sendable {
    /// A signed-in session.
    case session
    /// A sign-in form that was posted (each form signs in once).
    case usedSignInForm
}

extension LedgerStatement {
    static let forgetExpiredDashboardTokens = LedgerStatement("DELETE FROM dashboard_tokens WHERE expires_at <= ?")
    static let dashboardToken = LedgerStatement(
        "SELECT csrf, expires_at FROM dashboard_tokens WHERE digest = ? AND kind = ? AND expires_at > ?")
    static let deleteDashboardToken = LedgerStatement("DELETE FROM dashboard_tokens WHERE digest = ?")
}

extension LedgerWrite {
    static let insertDashboardToken = LedgerWrite(
        """
        INSERT INTO dashboard_tokens (digest, kind, csrf, expires_at) VALUES (?, ?, ?, ?)
        ON CONFLICT (digest) DO NOTHING
        """, returning: "digest")
}
