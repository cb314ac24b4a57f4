public import AppStoreModels
import Crypto
public import Foundation

/// The purchases: verified transactions recorded once (with what they grant, take back and owe
/// Apple), the notifications that brought them, the renewal state Apple signed, and the answer an
/// upload gets.
///
/// One role of ``LedgerStore``.
public protocol PurchaseLedger: Sendable {
    /// Applies everything one verified transaction changes (see ``LedgerIngest``) in one
    /// database transaction, and nothing of it unless all of it:
    ///
    /// 1. **Record once.** The first record of a `transactionId` wins; later ones change nothing,
    ///    except that an unknown owner (`appUserID` nil) is filled in by the first caller who
    ///    knows it, and the grants are applied then. When `appUserID` is nil, the owner of an
    ///    earlier transaction with the same `originalTransactionId` is used (renewals, restores).
    ///    A transaction with a known owner and no revocation gets its currency grants credited
    ///    (amount × quantity) under the idempotency key `grant:<transactionId>:<currency>`; a
    ///    revoked transaction is recorded but grants nothing. The call owed on a first record is
    ///    written with it.
    /// 2. **Move.** A purchase another customer owns moves (every transaction with its
    ///    `originalTransactionId`) to the transaction's customer when `transfersOwnership`,
    ///    recording a `transaction.transferred` event and the call owed on a move.
    /// 3. **Revoke.** A revoked transaction is marked so, and its refunded share
    ///    (``RecordedTransaction/revokedShare``) of what it credited is taken back under the
    ///    clawback policy, once per share: a larger share later takes back only the difference.
    ///    A revocation dated no later than a refund reversal the ledger holds for the transaction
    ///    is not applied (see ``reinstate(transactionID:reversedAt:grants:)``).
    /// 4. **Summarize.** The owner's summary as ``customerSummary(bundleID:appUserID:recent:withJWS:)``
    ///    reads it, when asked.
    func ingest(_ change: LedgerIngest) async throws -> LedgerIngestOutcome

    /// Reinstates a revoked transaction whose refund Apple reversed (REFUND_REVERSED), in one
    /// database transaction; `reversedAt` is when Apple signed the reversal.
    ///
    /// The reversal applies to a revocation dated before it: the revocation (date, reason and
    /// share) is cleared, the daily figures lose the refund (and a subscription its earlier end),
    /// the purchase is marked for the subscription metrics, and a `transaction.reinstated` event
    /// is written. What the revocations since the previous reversal took back (`clawback` lines;
    /// their shortfalls were never taken) is credited again to whom it was taken from, per
    /// currency, under the key `reinstate:<transactionId>:<currency>:<reversedAt in ms>`, with a
    /// `balance.credited` event; an owner who was never credited (the transaction was recorded
    /// revoked) gets its `grants` now, under their usual keys.
    ///
    /// The latest reversal's date is kept on the transaction whatever else happens, and orders
    /// what arrives late or twice: a revocation dated no later than it (the refund it reversed,
    /// delivered again or late) is not applied again, while a refund dated after it revokes
    /// again and takes back again. Returns whether the transaction was reinstated: `false` when
    /// it is unknown or not revoked, when its revocation is dated at or after `reversedAt`, or
    /// when a reversal signed at or after `reversedAt` was applied before.
    func reinstate(transactionID: String, reversedAt: Date, grants: [Grant]) async throws -> Bool

    /// A transaction by ID.
    func transaction(id: String) async throws -> RecordedTransaction?

    /// The transaction recorded with exactly these signed bytes (found by their SHA-256) and, when
    /// it has an owner, the owner's summary as ``customerSummary(bundleID:appUserID:recent:withJWS:)``
    /// reads it with no recent transactions and no JWS, from one snapshot: what answering a
    /// duplicate upload takes. Bytes the ledger stored were verified when they arrived, and
    /// verification depends on nothing but the bytes and the trust roots, so the same bytes need
    /// no second check.
    func signedTransactionAndSummary(
        digest: SignedDigest
    ) async throws -> (known: KnownSignedTransaction, summary: CustomerSummary?)?

    /// A bounded view of the customer for answers, read from one snapshot: balances, the
    /// transactions that can grant access (non-consumables and subscriptions, oldest first), the
    /// `recent` newest transactions, each with its signed JWS only when `withJWS`, and the count.
    func customerSummary(
        bundleID: String, appUserID: String, recent: Int, withJWS: Bool
    ) async throws -> CustomerSummary

    /// Records a notification once; false when its UUID was seen before. Durable when it returns.
    func recordNotification(
        uuid: String, type: String, subtype: String?, bundleID: String, transactionID: String?, signedPayload: String,
        receivedAt: Date
    ) async throws -> Bool

    /// The newest notifications received, newest first; of one customer when `appUserID` is given.
    func receivedNotifications(
        bundleID: String?, appUserID: String?, limit: Int
    ) async throws -> [ReceivedNotification]

    /// Stores what a notification says of a subscription's renewal, unless the ledger holds what
    /// Apple signed at the same moment or later (a notification delivered late or again changes
    /// nothing). A billing problem the ledger knew already keeps the date it was first seen.
    /// Returns whether the stored state changed; durable when it returns.
    func recordRenewal(_ renewal: SubscriptionRenewal) async throws -> Bool

    /// The renewal state of an app's subscriptions, by original transaction ID; subscriptions the
    /// ledger knows nothing about are left out.
    func subscriptionRenewals(
        bundleID: String, originalTransactionIDs: [String]
    ) async throws -> [String: SubscriptionRenewal]

    /// A page of an app's subscriptions in one environment whose period ended at or after `start`
    /// and before `end` with nothing recorded since: the transaction that ends latest of each
    /// (unrevoked) has no later one, and no renewal state signed at or after its end. Ordered by
    /// the period's end and transaction ID, strictly after `cursor`.
    func lapsedSubscriptions(
        bundleID: String, environment: AppStoreEnvironment, endedFrom start: Date, before end: Date,
        after cursor: LapsedSubscription?, limit: Int
    ) async throws -> [LapsedSubscription]
}

extension PurchaseLedger {
    /// Records a transaction once and grants once: ``ingest(_:)`` with the transaction alone.
    public func record(_ transaction: RecordedTransaction, grants: [Grant]) async throws -> RecordOutcome {
        try await ingest(LedgerIngest(transaction, grants: grants)).recorded
    }

    /// Revokes a recorded transaction, taking back `share` (milliunits of a percent) of what it
    /// credited: ``ingest(_:)`` with the stored transaction and the revocation. `false` when the
    /// transaction is unknown or nothing changed (the same or a smaller share was revoked before).
    public func revoke(
        transactionID: String, at date: Date, reason: Int?, share: Int = RecordedTransaction.wholeShare,
        grants: [Grant] = [], policy: ClawbackPolicy
    ) async throws -> Bool {
        guard (1...RecordedTransaction.wholeShare).contains(share) else {
            throw LedgerStoreError(
                .invalidArgument,
                "a revoked share is 1 to \(RecordedTransaction.wholeShare) milliunits of a percent, not \(share)")
        }
        guard var transaction = try await transaction(id: transactionID) else { return false }
        transaction.revocationDate = date
        transaction.revocationReason = reason.map(RevocationReason.init(rawValue:))
        let partial = share < RecordedTransaction.wholeShare
        transaction.revocationType = partial ? .refundProrated : nil
        transaction.revocationPercentage = partial ? share : nil
        return try await ingest(LedgerIngest(transaction, grants: grants, clawbackPolicy: policy)).revoked
    }

    /// ``customerSummary(bundleID:appUserID:recent:withJWS:)`` with each transaction's JWS.
    public func customerSummary(bundleID: String, appUserID: String, recent: Int) async throws -> CustomerSummary {
        try await customerSummary(bundleID: bundleID, appUserID: appUserID, recent: recent, withJWS: true)
    }

    /// The transaction recorded with exactly these signed bytes, without its owner's summary.
    public func signedTransaction(digest: SignedDigest) async throws -> KnownSignedTransaction? {
        try await signedTransactionAndSummary(digest: digest)?.known
    }

    /// The transaction recorded with exactly these signed bytes and, when `summary` asks for one
    /// and the transaction has an owner, the owner's summary with the `recent` newest transactions
    /// (their JWS when `withJWS`): what answering an upload of bytes seen before takes. The
    /// summary an app's upload asks for (no recent transactions, no JWS) is read from the lookup's
    /// own snapshot (``signedTransactionAndSummary(digest:)``); a larger one is read after it.
    /// `nil` when no transaction was recorded with these bytes.
    public func recordedUpload(
        digest: SignedDigest, summary: (recent: Int, withJWS: Bool)?
    ) async throws -> (known: KnownSignedTransaction, summary: CustomerSummary?)? {
        guard let summary else { return try await signedTransaction(digest: digest).map { ($0, nil) } }
        if summary.recent == 0, !summary.withJWS { return try await signedTransactionAndSummary(digest: digest) }
        guard let known = try await signedTransaction(digest: digest) else { return nil }
        guard let owner = known.appUserID else { return (known, nil) }
        return (
            known,
            try await customerSummary(
                bundleID: known.bundleID, appUserID: owner, recent: summary.recent, withJWS: summary.withJWS)
        )
    }
}

/// The SHA-256 of a signed JWS's bytes.
public struct SignedDigest: Hashable, Sendable {
    /// The 32 bytes.
    public let bytes: Data

    /// The digest of `jws`'s UTF-8 bytes.
    public init(_ jws: String) {
        var text = jws
        bytes = text.withUTF8 { Data(SHA256.hash(data: $0)) }
    }
}

/// What the ledger knows of a transaction stored with given signed bytes.
public struct KnownSignedTransaction: Hashable, Sendable {
    /// The transaction's ID.
    public var transactionID: String
    /// The app it was recorded for.
    public var bundleID: String
    /// The environment that signed it.
    public var environment: AppStoreEnvironment
    /// Its owner, when the ledger knows them.
    public var appUserID: String?

    /// Creates the record from its parts.
    public init(transactionID: String, bundleID: String, environment: AppStoreEnvironment, appUserID: String?) {
        self.transactionID = transactionID
        self.bundleID = bundleID
        self.environment = environment
        self.appUserID = appUserID
    }
}

/// A subscription whose paid period ended with nothing recorded since: the transaction that ended.
public struct LapsedSubscription: Hashable, Sendable {
    /// The subscription's original transaction ID.
    public var originalTransactionID: String
    /// The transaction whose period ended.
    public var transactionID: String
    /// When the period ended.
    public var expiresDate: Date

    /// Creates the record from its parts.
    public init(originalTransactionID: String, transactionID: String, expiresDate: Date) {
        self.originalTransactionID = originalTransactionID
        self.transactionID = transactionID
        self.expiresDate = expiresDate
    }
}
