public import AppStoreModels
import Crypto
public import Foundation

/// The server's storage: an append-only, idempotent ledger of transactions, notifications and
/// currency movements, from which entitlements and balances are derived.
///
/// Correctness never relies on process memory: uniqueness (one row per `transactionId`, per
/// `notificationUUID`, per idempotency key) and "never below zero" are enforced by the database,
/// so several server replicas can share one database.
public protocol LedgerStore: Sendable {
    /// Creates or upgrades the schema (append-only migrations).
    func migrate() async throws

    /// Waits for the operations in flight, then closes what the store opened.
    func shutdown() async throws

    /// Returns when the database answers; throws when it cannot be reached.
    func ping() async throws

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

    /// Records a notification once; false when its UUID was seen before. Durable when it returns.
    func recordNotification(
        uuid: String, type: String, subtype: String?, bundleID: String, transactionID: String?, signedPayload: String,
        receivedAt: Date
    ) async throws -> Bool

    /// The customer's transactions, ledger and balances; entitlements are derived by the caller
    /// from the transactions and the grants.
    func customer(bundleID: String, appUserID: String) async throws -> CustomerState

    /// A bounded view of the customer for answers, read from one snapshot: balances, the
    /// transactions that can grant access (non-consumables and subscriptions, oldest first), the
    /// `recent` newest transactions, each with its signed JWS only when `withJWS`, and the count.
    func customerSummary(
        bundleID: String, appUserID: String, recent: Int, withJWS: Bool
    ) async throws -> CustomerSummary

    /// A page of the customer's transactions, newest first, strictly after `cursor`.
    func transactions(
        bundleID: String, appUserID: String, limit: Int, after cursor: TransactionCursor?
    ) async throws -> [RecordedTransaction]

    /// Makes the anonymous customer `anonymousID` an alias of the identified customer `appUserID`
    /// and moves the anonymous customer's purchases, ledger lines, balances and app downloads to
    /// them, in one database transaction, recording a `customer.aliased` event. Purchases another
    /// identified customer holds part of move from that customer only when `transfersOwnership`.
    /// Idempotent: the same call again changes nothing. An anonymous ID aliased to another
    /// customer before is answered with ``CustomerAliasOutcome/aliasedToAnotherCustomer(_:)``.
    ///
    /// An anonymous ID the app's ledger has never seen (no alias row, transaction, balance, ledger
    /// line or app download of it in this app) is not recorded at all: no alias row and no
    /// `customer.aliased` event are written, and the answer is ``CustomerAliasOutcome/aliased(_:)``
    /// with a move that changed nothing (``CustomerAliasMove/created`` and
    /// ``CustomerAliasMove/changedAnything`` both `false`). Requests naming that ID later are not
    /// sent to `appUserID`, so a made-up or leaked anonymous ID cannot be claimed before its
    /// device has used it.
    func alias(
        bundleID: String, anonymousID: String, to appUserID: String, transfersOwnership: Bool, at date: Date
    ) async throws -> CustomerAliasOutcome

    /// The identified customer the anonymous customer `anonymousID` became, if any.
    func aliasedCustomer(bundleID: String, anonymousID: String) async throws -> String?

    /// Spends currency atomically: never below zero, once per idempotency key.
    func spend(
        bundleID: String, appUserID: String, currency: String, amount: Int64, idempotencyKey: String, at date: Date
    ) async throws -> SpendOutcome

    /// A transaction by ID.
    func transaction(id: String) async throws -> RecordedTransaction?

    // MARK: Webhooks outbox

    /// Events not yet delivered to `endpoint`, for the backlog metric.
    func undeliveredEventCount(endpoint: String) async throws -> Int
    /// Records the delivery attempts of a batch to `endpoint` in one write transaction, and
    /// releases their leases. A failed attempt is tried again at its `retryAt`, or given up
    /// without one; once delivered, an event stays delivered.
    func markDeliveries(_ attempts: [DeliveryAttempt], endpoint: String) async throws
    /// Takes the due events for `endpoint` that no one else holds, leased until `leaseUntil`:
    /// until then no other caller (in this process or another replica) gets them, so each is sent
    /// once in the normal case. A holder that dies before ``markDeliveries(_:endpoint:)`` leaves
    /// the lease to expire, and the event is due again for everyone.
    func claimDueEvents(endpoint: String, now: Date, limit: Int, leaseUntil: Date) async throws -> [LedgerEvent]

    // MARK: Background work

    /// Runs `body` unless another server sharing the database runs `job` now; `nil` when it did not run.
    func exclusively<R: Sendable>(_ job: ExclusiveJob, _ body: @escaping @Sendable () async throws -> R)
        async throws -> R?

    // MARK: Hosted content

    /// Stores a content package's bytes and metadata (a new version replaces nothing: versions are kept).
    func putContent(_ package: ContentPackage, bytes: Data) async throws
    /// The latest version of a product's package and its bytes.
    func latestContent(bundleID: String, productID: String) async throws -> (ContentPackage, Data)?

    // MARK: Dashboard reads

    /// An app's figures (``DailyFigures``) for the UTC days numbered `days`, kept with each write
    /// and read without reading its transactions, with the subscriptions active before the first
    /// of those days (one sum over the figures of the days before) and at `now` (the figures up to
    /// now's day, plus the subscriptions whose period ends later that day, read through the index
    /// by expiry).
    func dailyFigures(bundleID: String, days: Range<Int>, now: Date) async throws -> DailyFiguresPeriod

    // MARK: Subscription metrics

    /// Brings the subscription metrics up to date with at most `limit` of the purchases whose
    /// transactions (or grace periods) changed since: each is worked out again from all its
    /// transactions, and the difference from what it contributed before is added to the rollups,
    /// in one database transaction. Returns how many were taken; zero when the metrics are up to
    /// date. Servers sharing a database take turns.
    func updateMetrics(limit: Int) async throws -> Int
    /// The rollups an app's environment's metrics are read from, for the UTC days in `days`.
    func metrics(
        bundleID: String, environment: AppStoreEnvironment, days: ClosedRange<Int>, now: Date
    ) async throws -> MetricsReading
    /// For each period, the subscriptions that were active and paid at the last instant before it
    /// and are not active at its last instant, by the product and storefront they ended with:
    /// read from the periods of paid service that end inside it.
    func churnedSubscriptions(
        bundleID: String, environment: AppStoreEnvironment, periods: [MetricPeriod]
    ) async throws -> [[MetricCount]]
    /// At most `limit` customers, newest purchase first: with an empty query, those with the
    /// newest purchases (read newest first through the index by purchase date, stopping once
    /// `limit` customers are found); otherwise those who own a transaction or original
    /// transaction with exactly that ID, and those whose app user ID starts with `query`
    /// (case-insensitive; the first `limit` in the order of their IDs, through the index by
    /// lowercase ID). Of one app when `bundleID` is given (the walk through the newest purchases
    /// reads as many rows either way, so an app with few of them may find fewer).
    func findCustomers(matching query: String, limit: Int, bundleID: String?) async throws -> [CustomerMatch]
    /// The newest notifications received, newest first; of one customer when `appUserID` is given.
    func receivedNotifications(
        bundleID: String?, appUserID: String?, limit: Int
    ) async throws -> [ReceivedNotification]
    /// The newest outbox events with their delivery state per endpoint, newest first; of one
    /// customer when `appUserID` is given. An event names an anonymous customer as
    /// ``CustomerIDRedaction/redacted(_:)`` does, so its ``WebhookDelivery/appUserID`` is that; an
    /// anonymous `appUserID` given here is redacted the same way to find its events.
    func webhookDeliveries(bundleID: String?, appUserID: String?, limit: Int) async throws -> [WebhookDelivery]
    /// Records that a reconciliation of `bundleID` starts at `date`, and returns the run with its
    /// ID, unless a run of the app goes on: then that run, with `isNew` false (one run of an app
    /// at a time, whichever server started it). A run still `running` whose counts were not
    /// brought up to date in the `abandonedAfter` seconds before `date` (its server stopped) is
    /// recorded as failed first.
    func startReconciliation(bundleID: String, at date: Date, abandonedAfter: TimeInterval) async throws
        -> (run: ReconciliationRun, isNew: Bool)
    /// Brings a run's state, counts, end and failure up to date, by its ID.
    func updateReconciliation(_ run: ReconciliationRun) async throws
    /// A reconciliation run by its ID.
    func reconciliationRun(id: Int64) async throws -> ReconciliationRun?
    /// The newest reconciliation runs, newest first; of one app when `bundleID` is given.
    func reconciliationRuns(bundleID: String?, limit: Int) async throws -> [ReconciliationRun]
    /// A page of an app's subscriptions in one environment whose period ended at or after `start`
    /// and before `end` with nothing recorded since: the transaction that ends latest of each
    /// (unrevoked) has no later one, and no renewal state signed at or after its end. Ordered by
    /// the period's end and transaction ID, strictly after `cursor`.
    func lapsedSubscriptions(
        bundleID: String, environment: AppStoreEnvironment, endedFrom start: Date, before end: Date,
        after cursor: LapsedSubscription?, limit: Int
    ) async throws -> [LapsedSubscription]
    /// Until when reconciliation has read Apple's notification history for an app's environment;
    /// `nil` before the first read.
    func notificationCheckpoint(bundleID: String, environment: AppStoreEnvironment) async throws -> Date?
    /// Moves the checkpoint of an app's environment forward to `readUntil`; a checkpoint already
    /// later stays.
    func advanceNotificationCheckpoint(
        bundleID: String, environment: AppStoreEnvironment, to readUntil: Date, at date: Date
    ) async throws

    // MARK: Dashboard sessions

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

    // MARK: Failed sign-ins

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

    // MARK: Signed bytes seen before

    /// The transaction recorded with exactly these signed bytes (found by their SHA-256) and, when
    /// it has an owner, the owner's summary as ``customerSummary(bundleID:appUserID:recent:withJWS:)``
    /// reads it with no recent transactions and no JWS, from one snapshot: what answering a
    /// duplicate upload takes. Bytes the ledger stored were verified when they arrived, and
    /// verification depends on nothing but the bytes and the trust roots, so the same bytes need
    /// no second check.
    func signedTransactionAndSummary(
        digest: SignedDigest
    ) async throws -> (known: KnownSignedTransaction, summary: CustomerSummary?)?

    // MARK: Offers and calls owed to Apple

    /// Logs an offer signature by its nonce; a nonce logged before is refused.
    func recordOfferSignature(_ record: OfferSignatureRecord) async throws
    /// The newest offer signatures, of one app when `bundleID` is given.
    func offerSignatures(bundleID: String?, limit: Int) async throws -> [OfferSignatureRecord]
    /// Records a call owed to Apple once per ID; `false` when it was recorded before.
    func recordAppleRequest(_ request: AppleRequestRecord) async throws -> Bool
    /// Takes the pending calls due at `now`, leased until `leaseUntil`.
    func claimDueAppleRequests(now: Date, limit: Int, leaseUntil: Date) async throws -> [AppleRequestRecord]
    /// Ends a claimed call, or makes it pending again at `retryAt`.
    func finishAppleRequest(
        _ id: String, state: AppleRequestRecord.State, sentBody: String?, error: String?, retryAt: Date?, at date: Date
    ) async throws
    /// The newest calls owed to Apple, of one app when `bundleID` is given.
    func appleRequests(bundleID: String?, limit: Int) async throws -> [AppleRequestRecord]

    // MARK: App downloads

    /// Records that an app download belongs to a customer (the latest link wins).
    func linkAppTransaction(
        bundleID: String, appTransactionID: String, appUserID: String, environment: AppStoreEnvironment, at date: Date
    ) async throws
    /// The app downloads linked to a customer, newest link first (at most 50).
    func appTransactions(bundleID: String, appUserID: String) async throws -> [(appTransactionID: String, linkedAt: Date)]
    /// The customer an app download was last linked to, if any.
    func appTransactionCustomer(bundleID: String, appTransactionID: String) async throws -> String?

    // MARK: Subscription renewals

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
}

/// Background work that one server at a time runs, when several share a database.
public enum ExclusiveJob: String, Sendable, CaseIterable {
    /// Reconciling the ledger with the App Store Server API.
    case reconciliation
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

extension Sequence<UInt8> {
    /// Lowercase hex digits, two per byte.
    package var hexDigits: String {
        var text = ""
        text.reserveCapacity(underestimatedCount * 2)
        for byte in self {
            text.append(lowercaseHexDigits[Int(byte >> 4)])
            text.append(lowercaseHexDigits[Int(byte & 0x0F)])
        }
        return text
    }
}

private let lowercaseHexDigits = Array("0123456789abcdef")

extension LedgerStore {
    /// The newest reconciliation runs of every app, newest first.
    public func reconciliationRuns(limit: Int) async throws -> [ReconciliationRun] {
        try await reconciliationRuns(bundleID: nil, limit: limit)
    }

    /// Customers of every app matching `query` (``findCustomers(matching:limit:bundleID:)``).
    public func findCustomers(matching query: String, limit: Int) async throws -> [CustomerMatch] {
        try await findCustomers(matching: query, limit: limit, bundleID: nil)
    }

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
}
