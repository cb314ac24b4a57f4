import SQLKit

/// The PostgreSQL advisory locks the ledger takes: the first key is Kakin's, the second names the
/// use. An advisory lock belongs to a connection, so a replica that dies (or loses its
/// connection) releases its locks with it.
enum LedgerLock: Int32 {
    /// Held while migrating, so replicas that start together migrate one after the other.
    case migrations = 1
    /// Held while a replica reconciles; the others skip their turn.
    case reconciliation = 2

    /// The first key of every lock the ledger takes ("KKN1").
    static let namespace: Int32 = 0x4B4B_4E31

    init(_ job: ExclusiveJob) {
        switch job {
        case .reconciliation: self = .reconciliation
        }
    }
}

extension SQLLedgerStore {
    /// Runs `body` holding `lock` on `session` (one connection). With `waiting`, waits for the
    /// lock when another connection holds it; without, returns `nil` at once instead of running
    /// `body`. The lock is released when `body` returns or throws.
    @discardableResult
    static func holdingAdvisoryLock<R: Sendable>(
        _ lock: LedgerLock, on session: any SQLDatabase, waiting: Bool, _ body: () async throws -> R
    ) async throws -> R? {
        if waiting {
            try await session.raw(
                "SELECT pg_advisory_lock(\(bind: LedgerLock.namespace), \(bind: lock.rawValue))"
            ).run()
        } else {
            let acquired = try await session.raw(
                "SELECT pg_try_advisory_lock(\(bind: LedgerLock.namespace), \(bind: lock.rawValue)) AS acquired"
            ).first()?.decode(column: "acquired", as: Bool.self)
            guard acquired == true else { return nil }
        }
        let result: R
        do { result = try await body() } catch {
            try? await releaseAdvisoryLock(lock, on: session)
            throw error
        }
        try await releaseAdvisoryLock(lock, on: session)
        return result
    }

    private static func releaseAdvisoryLock(_ lock: LedgerLock, on session: any SQLDatabase) async throws {
        try await session.raw(
            "SELECT pg_advisory_unlock(\(bind: LedgerLock.namespace), \(bind: lock.rawValue))"
        ).run()
    }

    /// Runs `body` unless another replica on the same PostgreSQL runs `job` now; `nil` when it
    /// did not run. The lock is held on a connection of its own until `body` returns. A SQLite
    /// ledger has one server, which always runs `body`.
    public func exclusively<R: Sendable>(
        _ job: ExclusiveJob, _ body: @escaping @Sendable () async throws -> R
    ) async throws -> R? {
        guard dialect == .postgresql, engine == nil else { return try await body() }
        let lock = LedgerLock(job)
        return try await database.withSession { session -> R? in
            try await Self.holdingAdvisoryLock(lock, on: session, waiting: false, body)
        }
    }
}
