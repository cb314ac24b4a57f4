import Foundation
import KakinLedger

/// The offer signatures and the calls owed to Apple kept in memory: ``AppleCallLedger`` for tests
/// of what uses the role, run without a database. Instants are kept in whole milliseconds, as the
/// engines store them.
public actor InMemoryAppleCallLedger: AppleCallLedger {
    private var signatures: [String: OfferSignatureRecord] = [:]
    private var requests: [String: AppleRequestRecord] = [:]
    /// Until when and by whom a claimed call is held, by ID.
    private var leases: [String: (until: Date, holder: String)] = [:]

    /// An empty ledger.
    public init() {}

    public func recordOfferSignature(_ record: OfferSignatureRecord) async throws {
        guard signatures[record.nonce] == nil else {
            throw LedgerStoreError(.invalidArgument, "an offer signature with nonce \(record.nonce) exists already")
        }
        var record = record
        record.createdAt = stored(record.createdAt)
        signatures[record.nonce] = record
    }

    public func offerSignatures(bundleID: String?, limit: Int) async throws -> [OfferSignatureRecord] {
        Array(
            signatures.values.filter { bundleID == nil || $0.bundleID == bundleID }
                .sorted { ($1.createdAt, $0.nonce) < ($0.createdAt, $1.nonce) }
                .prefix(limit))
    }

    public func recordAppleRequest(_ request: AppleRequestRecord) async throws -> Bool {
        guard requests[request.id] == nil else { return false }
        var request = request
        request.requestedAt = stored(request.requestedAt)
        request.nextAttemptAt = stored(request.nextAttemptAt)
        request.finishedAt = request.finishedAt.map(stored)
        requests[request.id] = request
        return true
    }

    public func claimDueAppleRequests(
        holder: String, now: Date, limit: Int, leaseUntil: Date
    ) async throws -> [AppleRequestRecord] {
        let now = stored(now)
        let due = requests.values.filter { request in
            if let lease = leases[request.id], lease.until > now, lease.holder != holder { return false }
            return request.state == .pending && request.nextAttemptAt <= now
        }
        .sorted { ($0.nextAttemptAt, $0.id) < ($1.nextAttemptAt, $1.id) }
        .prefix(limit)
        return due.map { request in
            var claimed = request
            claimed.attempts += 1
            requests[claimed.id] = claimed
            leases[claimed.id] = (stored(leaseUntil), holder)
            return claimed
        }
    }

    public func finishAppleRequest(
        _ id: String, state: AppleRequestRecord.State, sentBody: String?, error: String?, retryAt: Date?, at date: Date
    ) async throws {
        guard var request = requests[id] else { return }
        request.state = state
        request.sentBody = sentBody
        request.lastError = error
        request.nextAttemptAt = stored(retryAt ?? Date(timeIntervalSince1970: 0))
        request.finishedAt = state == .pending ? nil : stored(date)
        requests[id] = request
        leases[id] = nil
    }

    public func appleRequests(bundleID: String?, limit: Int) async throws -> [AppleRequestRecord] {
        Array(
            requests.values.filter { bundleID == nil || $0.bundleID == bundleID }
                .sorted { ($1.requestedAt, $0.id) < ($0.requestedAt, $1.id) }
                .prefix(limit))
    }
}
