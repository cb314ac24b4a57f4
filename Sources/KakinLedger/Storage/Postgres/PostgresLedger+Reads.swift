import AppStoreModels
import Foundation
import PostgresNIO

/// Customers' summaries, and the lookups by digest that answer uploads seen before.
extension PostgresLedger {
    public func customerSummary(
        bundleID: String, appUserID: String, recent: Int, withJWS: Bool
    ) async throws -> CustomerSummary {
        guard recent >= 0 else { throw LedgerStoreError(.invalidArgument, "recent must not be negative") }
        let request = SummaryRequest(bundleID: bundleID, appUserID: appUserID, recent: recent, withJWS: withJWS)
        return try await read { try await Self.perform(SummaryStatements.summaries([request]), on: $0)[0] }
    }

    /// The transaction stored with these signed bytes and its owner's summary (no recent
    /// transactions, no JWS), looked up with the lookups asked for at the same moment
    /// (``PostgresLookups``).
    public func signedTransactionAndSummary(
        digest: SignedDigest
    ) async throws -> (known: KnownSignedTransaction, summary: CustomerSummary?)? {
        let found: (KnownSignedTransaction, CustomerSummary?)? = try await Self.result(
            of: PostgresLookups.Lookup(digest: digest.bytes, deadline: .now + connectionWait), on: lookups)
        return found.map { (known: $0.0, summary: $0.1) }
    }
}

/// Looks uploads up by the digest of their signed bytes: the lookups asked for while one runs wait
/// and run together, in one statement (``SummaryStatements/known(digests:)``) on one leased
/// connection. Each is answered with its transaction and its owner's summary, if any. A group waits for a connection until the deadline of
/// its oldest lookup only, so that no lookup waits longer than the connection wait in all, and
/// runs until a second after that deadline at most.
struct PostgresLookups: GroupCommitEngine {
    struct Lookup: Sendable {
        var digest: Data
        var deadline: ContinuousClock.Instant
    }

    let primary: PostgresPrimary
    let wait: Duration

    func commit(_ lookups: [Lookup], isolated: Bool) async throws -> [Result<any Sendable, any Error>] {
        let deadline = lookups.map(\.deadline).min() ?? .now
        guard deadline > .now else {
            throw LedgerStoreError(.unavailable, "no PostgreSQL connection within \(wait): unreachable or busy")
        }
        let (client, waiters) = try primary.pool()
        return try await PostgresLedger.lease(
            client: client, waiters: waiters, wait: deadline - .now, limit: wait + .seconds(1), deadline: deadline + .seconds(1)
        ) {
            try await PostgresLedger.perform(SummaryStatements.known(digests: lookups.map(\.digest)), on: $0).map { .success($0) }
        }
    }
}
