public import Foundation

/// What is owed to or signed for Apple: the offer signatures given out, and the calls owed to the
/// App Store Server API, claimed under a lease and finished or tried again.
///
/// One role of ``LedgerStore``.
public protocol AppleCallLedger: Sendable {
    /// Logs an offer signature by its nonce; a nonce logged before is refused.
    func recordOfferSignature(_ record: OfferSignatureRecord) async throws

    /// The newest offer signatures, of one app when `bundleID` is given.
    func offerSignatures(bundleID: String?, limit: Int) async throws -> [OfferSignatureRecord]

    /// Records a call owed to Apple once per ID; `false` when it was recorded before.
    func recordAppleRequest(_ request: AppleRequestRecord) async throws -> Bool

    /// Takes the pending calls due at `now` that no one else holds, leased to `holder` until
    /// `leaseUntil`. The same holder gets back the calls it holds (a claim whose answer was lost is
    /// not left waiting for its lease to end), so a holder's claims must not overlap.
    func claimDueAppleRequests(
        holder: String, now: Date, limit: Int, leaseUntil: Date
    ) async throws -> [AppleRequestRecord]

    /// Ends a claimed call, or makes it pending again at `retryAt`.
    func finishAppleRequest(
        _ id: String, state: AppleRequestRecord.State, sentBody: String?, error: String?, retryAt: Date?, at date: Date
    ) async throws

    /// The newest calls owed to Apple, of one app when `bundleID` is given.
    func appleRequests(bundleID: String?, limit: Int) async throws -> [AppleRequestRecord]
}
