import Crypto
import Foundation
import KakinServer
import KakinLedger

/// The dashboard's signed-in sessions and sign-in forms, valid on every server that shares the
/// ledger's database, so that a load balancer needs no sticky sessions.
///
/// - A session is a random token in an HttpOnly, SameSite=Strict cookie. The ledger keeps its
///   SHA-256 (never the token), its own random CSRF token, which every form posts back, the apps
///   it opens (``DashboardScope``), and when it expires on the server's clock. Signing out deletes
///   it: every server stops accepting it.
/// - A sign-in form carries a token that says when it expires, authenticated with HMAC-SHA256
///   under `formKey` (which every replica derives from the server key they share), so showing the
///   form writes nothing. Posting it records its SHA-256: a form signs in once.
struct DashboardSessions: Sendable {
    struct Session: Sendable {
        let token: String
        let csrf: String
        /// The apps the session opens, as stored when it signed in.
        let scope: DashboardScope
        let expires: Date
    }

    /// Where sessions and used forms are kept: the ledger every server shares.
    let ledger: any SessionLedger
    let lifetime: TimeInterval
    let formLifetime: TimeInterval = 3600
    let formKey: SymmetricKey
    let now: @Sendable () -> Date

    /// Starts a session that opens the apps of `scope`.
    func create(scope: DashboardScope) async throws -> Session {
        let current = now()
        let session = Session(
            token: Self.randomToken(), csrf: Self.randomToken(), scope: scope,
            expires: current.addingTimeInterval(lifetime))
        _ = try await ledger.insertDashboardToken(
            digest: Self.digest(session.token), kind: .session, csrf: session.csrf, scope: scope,
            expires: session.expires, now: current)
        return session
    }

    /// The live session with this token, or `nil` (also for a session stored without the apps it
    /// opens: it opens nothing, so it signs in again).
    func session(_ token: String) async throws -> Session? {
        guard token.utf8.count == 64,
            let found = try await ledger.dashboardToken(digest: Self.digest(token), kind: .session, now: now()),
            let csrf = found.csrf, let scope = found.scope
        else { return nil }
        return Session(token: token, csrf: csrf, scope: scope, expires: found.expires)
    }

    /// Ends a session (sign out), on every server.
    func end(_ token: String) async throws {
        try await ledger.deleteDashboardToken(digest: Self.digest(token))
    }

    /// A new sign-in form's token: `<expiry>.<random>.<HMAC>`.
    func signInFormToken() -> String {
        let body = "\(Int64(now().addingTimeInterval(formLifetime).timeIntervalSince1970)).\(Self.randomToken())"
        return body + "." + code(body)
    }

    /// Whether `token` is a sign-in form this deployment issued, not expired and not used
    /// before; it is used now.
    func useSignInForm(_ token: String) async throws -> Bool {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let expiry = Int64(parts[0]),
            KakinServerHTTP.constantTimeEquals(String(parts[2]), code("\(parts[0]).\(parts[1])"))
        else { return false }
        let current = now()
        let expires = Date(timeIntervalSince1970: TimeInterval(expiry))
        guard expires > current else { return false }
        return try await ledger.insertDashboardToken(
            digest: Self.digest(token), kind: .usedSignInForm, csrf: nil, scope: nil, expires: expires, now: current)
    }

    /// The HMAC-SHA256 of a sign-in form token's body, in hex.
    private func code(_ body: String) -> String {
        HMAC<SHA256>.authenticationCode(for: Data(("sign-in." + body).utf8), using: formKey).hexDigits
    }

    /// The key of the sign-in forms, the same on every server with the same server key.
    static func formKey(from serverKey: P256.Signing.PrivateKey) -> SymmetricKey {
        HKDF<SHA256>.deriveKey(
            inputKeyMaterial: SymmetricKey(data: serverKey.rawRepresentation),
            info: Data("kakin dashboard sign-in forms".utf8), outputByteCount: 32)
    }

    /// 32 random bytes as 64 hex digits.
    static func randomToken() -> String {
        SymmetricKey(size: .bits256).withUnsafeBytes { $0.hexDigits }
    }

    static func digest(_ token: String) -> Data {
        Data(SHA256.hash(data: Data(token.utf8)))
    }
}
