import Crypto
import Foundation

/// The dashboard's signed-in sessions, kept by the server: a random token in an HttpOnly,
/// SameSite=Strict cookie names a session that expires on the server's clock; each session has
/// its own random CSRF token, which every form posts back.
actor DashboardSessions {
    struct Session: Sendable {
        let token: String
        let csrf: String
        let expires: Date
    }

    /// The most sessions kept; the oldest goes first when a new one would exceed it.
    static let limit = 1000

    private var sessions: [String: Session] = [:]
    let lifetime: TimeInterval
    let now: @Sendable () -> Date

    init(lifetime: TimeInterval, now: @escaping @Sendable () -> Date) {
        self.lifetime = lifetime
        self.now = now
    }

    /// Starts a session.
    func create() -> Session {
        let current = now()
        sessions = sessions.filter { $0.value.expires > current }
        if sessions.count >= Self.limit, let oldest = sessions.values.min(by: { $0.expires < $1.expires }) {
            sessions[oldest.token] = nil
        }
        let session = Session(
            token: Self.randomToken(), csrf: Self.randomToken(), expires: current.addingTimeInterval(lifetime))
        sessions[session.token] = session
        return session
    }

    /// The live session with this token; an expired one is forgotten.
    func session(_ token: String) -> Session? {
        guard let session = sessions[token] else { return nil }
        guard session.expires > now() else {
            sessions[token] = nil
            return nil
        }
        return session
    }

    /// Ends a session (sign out).
    func end(_ token: String) {
        sessions[token] = nil
    }

    /// 32 random bytes as 64 hex digits.
    static func randomToken() -> String {
        SymmetricKey(size: .bits256).withUnsafeBytes { $0.hexDigits }
    }
}
