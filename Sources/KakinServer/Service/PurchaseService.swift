public import AppStoreModels
public import AppStoreSecurity
public import Foundation
public import KakinLedger
public import KakinWire
public import Logging

/// The server's core: verify what arrives, record it once, grant once, and answer with the
/// customer's state. The HTTP layer is a thin shell around it.
///
/// The verifiers of every (app, environment) pair are built once, when the service is made, so
/// the certificate chain of Apple's signing leaf is checked once (and, with revocation checks,
/// again when its OCSP answers run out) and then served from the cache.
public struct PurchaseService: Sendable {
    /// The purchases: recorded once, with what they grant, and the answers uploads get.
    public let purchases: any PurchaseLedger
    /// The customers, the anonymous customers they were, and their app downloads.
    public let customers: any CustomerLedger
    /// The balances currency is spent from.
    public let balances: any BalanceLedger
    /// The offer signatures given out and the calls owed to Apple.
    public let appleCalls: any AppleCallLedger
    /// The daily figures and the subscription metrics.
    public let figures: any MetricsLedger
    /// The webhooks outbox, read for a customer's activity.
    public let outbox: any OutboxLedger
    /// The ledger's health, its hosted content and its reconciliation runs.
    public let upkeep: any LedgerOperations
    /// The dashboard's sessions and the failed sign-ins, which the access checks built over this
    /// service (``SignInThrottle``, the dashboard's sessions) keep.
    public let sessions: any SessionLedger
    /// The answers given to the App Store's retention message requests, and whether their
    /// subscribers stayed; `nil` records none.
    public let retention: (any RetentionLedger)?
    /// The inbox of the apps' Stripe events; `nil` takes none (an app's Stripe webhooks are then
    /// refused as not configured).
    public let stripeEvents: (any StripeEventLedger)?
    /// The apps served, by bundle ID.
    public let apps: [String: AppConfiguration]
    /// Grants for apps that have none of their own.
    public let grants: GrantsCatalog
    /// Product types by ID (from the `.storekit` catalog), for apps that have none of their own.
    public let productTypes: [String: ProductType]
    /// How currency is taken back when a consumable purchase is refunded after some was spent.
    public let clawbackPolicy: ClawbackPolicy
    /// Sends app receipts to verifyReceipt, for the legacy flow.
    public let verifyReceiptClient: any VerifyReceiptClient
    /// Calls the App Store Server API to fetch again a transaction whose signing leaf has expired.
    public let exchange: any HTTPExchange
    /// The clock of the ledger: what "now" is for entitlements, grace periods and the metrics.
    public let now: @Sendable () -> Date
    /// The clock of what is checked against real time: the verifiers' certificate chains and
    /// revocation answers, bearer tokens for the App Store Server API, customer tokens. The same
    /// as ``now`` unless the service was given another (`kakin serve`, whose ledger follows the
    /// sandbox's clock).
    public let realNow: @Sendable () -> Date
    /// Counts ledger events; `nil` counts nothing.
    public let metrics: ServerMetrics?
    /// One line per ledger event (`transaction.recorded`, `transaction.revoked`, …).
    public let logger: Logger
    /// One verifier per app and accepted environment.
    private let verifiers: [VerifierKey: SignedDataVerifier]
    /// The runs applying each app's Stripe events: one at a time per app.
    let stripeRuns = StripeEventRuns()
    /// The rates the metrics convert amounts with, to one reporting currency; `nil` keeps each
    /// currency apart.
    public var currencyRates: CurrencyRates?

    private struct VerifierKey: Hashable {
        var bundleID: String
        var environment: AppStoreEnvironment
    }

    /// Creates the service over one ledger that plays every role (see
    /// ``init(purchases:customers:balances:appleCalls:figures:outbox:upkeep:sessions:apps:grants:productTypes:clawbackPolicy:verifyReceiptClient:exchange:ocspTransport:now:metrics:logger:realNow:retention:stripeEvents:)``).
    public init(
        store: any LedgerStore, apps: [AppConfiguration], grants: GrantsCatalog = GrantsCatalog(),
        productTypes: [String: ProductType] = [:],
        clawbackPolicy: ClawbackPolicy = .clampAtZero,
        verifyReceiptClient: any VerifyReceiptClient = URLSessionVerifyReceiptClient(),
        exchange: any HTTPExchange = URLSessionExchange(),
        ocspTransport: any OCSPTransport = URLSessionOCSPTransport.cancellable,
        now: @escaping @Sendable () -> Date = { Date() }, metrics: ServerMetrics? = nil,
        logger: Logger = KakinServerHTTP.quietLogger, realNow: (@Sendable () -> Date)? = nil
    ) {
        self.init(
            purchases: store, customers: store, balances: store, appleCalls: store, figures: store, outbox: store,
            upkeep: store, sessions: store, apps: apps, grants: grants, productTypes: productTypes,
            clawbackPolicy: clawbackPolicy, verifyReceiptClient: verifyReceiptClient, exchange: exchange,
            ocspTransport: ocspTransport, now: now, metrics: metrics, logger: logger, realNow: realNow,
            retention: store, stripeEvents: store)
    }

    /// Creates the service over the roles of the ledger it uses, and builds the verifier of each
    /// app and accepted environment, with its revocation check (through `ocspTransport`). When two
    /// apps share a bundle ID, the first is kept. Without `retention`, the answers to retention
    /// message requests are not recorded; without `stripeEvents`, no Stripe webhook is taken.
    public init(
        purchases: any PurchaseLedger, customers: any CustomerLedger, balances: any BalanceLedger,
        appleCalls: any AppleCallLedger, figures: any MetricsLedger, outbox: any OutboxLedger,
        upkeep: any LedgerOperations, sessions: any SessionLedger, apps: [AppConfiguration],
        grants: GrantsCatalog, productTypes: [String: ProductType], clawbackPolicy: ClawbackPolicy,
        verifyReceiptClient: any VerifyReceiptClient, exchange: any HTTPExchange, ocspTransport: any OCSPTransport,
        now: @escaping @Sendable () -> Date, metrics: ServerMetrics?, logger: Logger,
        realNow: (@Sendable () -> Date)? = nil, retention: (any RetentionLedger)? = nil,
        stripeEvents: (any StripeEventLedger)? = nil
    ) {
        self.purchases = purchases
        self.retention = retention
        self.stripeEvents = stripeEvents
        self.customers = customers
        self.balances = balances
        self.appleCalls = appleCalls
        self.figures = figures
        self.outbox = outbox
        self.upkeep = upkeep
        self.sessions = sessions
        self.metrics = metrics
        self.logger = logger
        self.apps = Dictionary(apps.map { ($0.bundleID, $0) }, uniquingKeysWith: { first, _ in first })
        self.grants = grants
        self.productTypes = productTypes
        self.clawbackPolicy = clawbackPolicy
        self.verifyReceiptClient = verifyReceiptClient
        self.exchange = exchange
        self.now = now
        let realNow = realNow ?? now
        self.realNow = realNow
        var verifiers: [VerifierKey: SignedDataVerifier] = [:]
        for app in self.apps.values {
            for environment in app.environments {
                let revocation = RevocationChecker(
                    mode: app.revocationMode(for: environment), transport: ocspTransport, now: realNow,
                    observer: Self.revocationObserver(
                        bundleID: app.bundleID, environment: environment, metrics: metrics, logger: logger))
                verifiers[VerifierKey(bundleID: app.bundleID, environment: environment)] = app.verifier(
                    for: environment, revocation: revocation, now: realNow)
            }
        }
        self.verifiers = verifiers
    }

    /// Logs and counts each revocation check: a revocation or an unusable answer at `warning`
    /// (an accepted chain that could not be checked, under `bestEffort`, included), a good answer
    /// at `debug`.
    private static func revocationObserver(
        bundleID: String, environment: AppStoreEnvironment, metrics: ServerMetrics?, logger: Logger
    ) -> @Sendable (RevocationEvent) -> Void {
        { event in
            metrics?.revocationCheck(outcome: event.outcome.rawValue, mode: event.mode.rawValue)
            let level: Logger.Level = event.outcome == .good ? .debug : .warning
            logger.log(
                level: level, "revocation",
                metadata: [
                    "event": "revocation.\(event.outcome.rawValue)", "bundle_id": "\(bundleID)",
                    "environment": "\(environment.rawValue)", "mode": "\(event.mode.rawValue)",
                    "leaf": "\(event.leafSubject)", "detail": "\(event.detail)",
                ])
        }
    }

    /// The configuration of `bundleID`.
    public func app(_ bundleID: String) throws(ServerError) -> AppConfiguration {
        guard let app = apps[bundleID] else { throw ServerError(.unknownApp, "no app is configured for \(bundleID)") }
        return app
    }

    /// What `productID` of `app` grants.
    public func grants(for productID: String, of app: AppConfiguration) -> [Grant] {
        (app.grants ?? grants).grants(for: productID)
    }

    /// The verifier of `app` for data signed in `environment`.
    public func verifier(
        _ app: AppConfiguration, _ environment: AppStoreEnvironment
    ) throws(ServerError) -> SignedDataVerifier {
        guard let verifier = verifiers[VerifierKey(bundleID: app.bundleID, environment: environment)] else {
            throw ServerError(
                .verificationFailed, "\(app.bundleID) does not accept \(environment.rawValue) data",
                cause: "wrongEnvironment")
        }
        return verifier
    }

    // MARK: - Signed transactions

    /// `POST /v1/transactions`: verifies a signed transaction, records it for `appUserID`, grants
    /// once, and returns the customer's state.
    public func submitTransaction(
        _ jws: String, bundleID: String, appUserID: String, signedAppTransaction: String? = nil
    ) async throws -> EntitledCustomer {
        try await submit(jws, bundleID: bundleID, appUserID: appUserID, signedAppTransaction: signedAppTransaction)
        return try await customer(bundleID: bundleID, appUserID: appUserID)
    }

    /// Verifies and records a signed transaction for `appUserID`, without reading the customer.
    /// `signedAppTransaction` is the uploading device's app transaction, the proof a restore of a
    /// purchase another customer owns needs (see ``submit(_:app:appUserID:recent:withJWS:signedAppTransaction:)``).
    @discardableResult
    public func submit(
        _ jws: String, bundleID: String, appUserID: String, signedAppTransaction: String? = nil
    ) async throws -> IngestOutcome {
        try await submit(
            jws, app: try app(bundleID), appUserID: appUserID, summarizing: nil,
            signedAppTransaction: signedAppTransaction
        ).outcome
    }

    /// Verifies and records a signed transaction for `appUserID`, then returns the customer's
    /// summary as ``customerSummary(bundleID:appUserID:recent:withJWS:)`` would: what an upload
    /// is answered with. A new purchase is recorded and summarized in one trip to the ledger.
    public func submit(
        _ jws: String, bundleID: String, appUserID: String, recent: Int, withJWS: Bool,
        signedAppTransaction: String? = nil
    ) async throws -> (outcome: IngestOutcome, summary: CustomerSummary, entitlements: [Entitlement]) {
        try await submit(
            jws, app: try app(bundleID), appUserID: appUserID, recent: recent, withJWS: withJWS,
            signedAppTransaction: signedAppTransaction)
    }

    /// ``submit(_:bundleID:appUserID:recent:withJWS:signedAppTransaction:)`` for an app the caller has looked up.
    ///
    /// `signedAppTransaction` is the uploading device's app transaction (JWS), which the SDK sends
    /// with restores: under ``TransferPolicy/transferToNewUser`` a purchase that another customer
    /// owns moves to `appUserID` only when the transaction's app account token is `appUserID`'s own
    /// or this app transaction verifies and has the transaction's `appTransactionId`; otherwise
    /// the upload is refused with 409 `conflict`, cause `purchasedByAnotherAccount`.
    public func submit(
        _ jws: String, app: AppConfiguration, appUserID: String, recent: Int, withJWS: Bool,
        signedAppTransaction: String? = nil
    ) async throws -> (outcome: IngestOutcome, summary: CustomerSummary, entitlements: [Entitlement]) {
        let (outcome, recorded) = try await submit(
            jws, app: app, appUserID: appUserID, summarizing: (recent, withJWS),
            signedAppTransaction: signedAppTransaction)
        if let recorded { return (outcome, recorded, try await entitlements(of: recorded, app: app)) }
        let (summary, entitlements) = try await customerSummary(
            app: app, appUserID: appUserID, recent: recent, withJWS: withJWS, readsConsent: false)
        return (outcome, summary, entitlements)
    }

    /// Verifies and records an upload, unless exactly these bytes are already recorded for this
    /// customer: then nothing changes. Bytes the ledger holds are found by their digest before
    /// anything is verified (an app posting its transactions again at launch costs one read).
    private func submit(
        _ jws: String, app: AppConfiguration, appUserID: String, summarizing: (recent: Int, withJWS: Bool)?,
        signedAppTransaction: String? = nil
    ) async throws -> (outcome: IngestOutcome, summary: CustomerSummary?) {
        // The ledger's key of these bytes is taken once, for the lookup and for the ingest.
        let digest = SignedDigest(jws)
        if let answer = try await seenBefore(digest, app: app, appUserID: appUserID, summarizing: summarizing) {
            return answer
        }
        let upload = try await verifyUpload(jws, digest: digest, app: app)
        let record = try upload.record(appUserID: appUserID, at: now())
        try checkSandboxPolicy(record.environment, appUserID: appUserID, app: app)
        return try await ingest(
            record, app: app, signedDigest: upload.digest, summarizing: summarizing,
            transferProof: TransferProof(
                appTransactionID: upload.payload.appTransactionID, signedAppTransaction: signedAppTransaction))
    }

    /// Refuses a sandbox purchase for a customer the app's ``SandboxPurchasePolicy`` does not
    /// accept one from: 403 `forbidden`, cause `sandboxPurchaseNotAllowed`.
    func checkSandboxPolicy(
        _ environment: AppStoreEnvironment, appUserID: String, app: AppConfiguration
    ) throws(ServerError) {
        guard environment == .sandbox, !app.sandboxPurchases.allows(appUserID) else { return }
        throw ServerError(
            .forbidden, "\(app.bundleID) accepts sandbox purchases only from the customers of its sandboxAllowList",
            cause: "sandboxPurchaseNotAllowed")
    }

    /// The outcome of an upload whose bytes the ledger held already for its customer.
    private static let unchanged = IngestOutcome(isNew: false, revoked: false, transferredFrom: nil)

    /// The answer to an upload whose exact bytes are recorded for this customer already (nothing
    /// changes), or `nil`: the ledger finds the bytes and reads the owner's summary as asked.
    private func seenBefore(
        _ digest: SignedDigest, app: AppConfiguration, appUserID: String, summarizing: (recent: Int, withJWS: Bool)?
    ) async throws -> (outcome: IngestOutcome, summary: CustomerSummary?)? {
        guard let (known, summary) = try await purchases.recordedUpload(digest: digest, summary: summarizing),
            isAcceptedDuplicate(known, app: app, appUserID: appUserID)
        else { return nil }
        return (Self.unchanged, summary)
    }

    /// Whether signed bytes the ledger holds as `known` need nothing more when `appUserID` of
    /// `app` posts them again: the same app and customer, in an environment the app still accepts.
    private func isAcceptedDuplicate(_ known: KnownSignedTransaction, app: AppConfiguration, appUserID: String) -> Bool {
        known.bundleID == app.bundleID && known.appUserID == appUserID
            && verifiers[VerifierKey(bundleID: app.bundleID, environment: known.environment)] != nil
    }

    /// Verifies an app's upload of a signed transaction: the one value the rest of the upload
    /// path works with. `digest` is `SignedDigest(jws)`, already taken.
    func verifyUpload(_ jws: String, digest: SignedDigest, app: AppConfiguration) async throws(ServerError)
        -> VerifiedUpload
    {
        let (payload, signed) = try await verifyTransaction(jws, app: app)
        // A late upload fetched again is recorded with the fresh JWS, and the row with its digest.
        return VerifiedUpload(
            signedTransaction: signed, digest: signed == jws ? digest : SignedDigest(signed), payload: payload)
    }

    /// What ``ingest(_:app:)`` did.
    public struct IngestOutcome: Hashable, Sendable {
        /// Recorded for the first time (false: seen before).
        public var isNew: Bool
        /// Revoked now (a refund or revocation the ledger did not know, or a larger share of a
        /// transaction refunded in part before).
        public var revoked: Bool
        /// The previous owner, when the purchase moved to the customer who restored it.
        public var transferredFrom: String?
    }

    /// The one path from a verified transaction to the ledger, shared by the app's uploads,
    /// notifications, receipts and reconciliation: record once and grant once; apply the app's
    /// transfer policy when another customer owns it; revoke when it carries a revocation. All of
    /// it commits in one database transaction (`LedgerStore/ingest(_:)`).
    public func ingest(_ record: RecordedTransaction, app: AppConfiguration) async throws -> IngestOutcome {
        try await ingest(record, app: app, signedDigest: nil, summarizing: nil).outcome
    }

    /// ``ingest(_:app:)``, reading the owner's summary (`recent` newest transactions, JWS when
    /// `withJWS`) with the rest when `summarizing` says so; `signedDigest` is `SignedDigest` of the
    /// record's JWS when it was taken already.
    ///
    /// With a `transferProof` (an app's upload), a purchase another customer owns moves only when
    /// the proof holds (``provesAccount(_:of:app:)``), weighed only then: an upload of a purchase
    /// nobody else owns costs nothing more.
    func ingest(
        _ record: RecordedTransaction, app: AppConfiguration, signedDigest: SignedDigest?,
        summarizing: (recent: Int, withJWS: Bool)?, transferProof: TransferProof? = nil
    ) async throws -> (outcome: IngestOutcome, summary: CustomerSummary?) {
        let transfers = app.transferPolicy == .transferToNewUser && record.productType != .consumable
        // Apple learns the owner's app account token of a new purchase that carries none, and of a
        // purchase that moved to its owner: the call commits with the purchase.
        let owed = record.appUserID.flatMap { owner in
            app.setsAppAccountTokens && app.serverAPI != nil ? appAccountTokenRequest(of: owner, on: record, app: app) : nil
        }
        func ingested(transferring: Bool) async throws -> LedgerIngestOutcome {
            try await purchases.ingest(
                LedgerIngest(
                    record, signedDigest: signedDigest, grants: grants(for: record.productID, of: app),
                    transfersOwnership: transferring, clawbackPolicy: clawbackPolicy, summary: summarizing,
                    appleRequestOnRecord: record.appAccountToken == nil ? owed : nil, appleRequestOnTransfer: owed))
        }
        var change = try await ingested(transferring: transfers && transferProof == nil)
        if case .ownedByAnotherCustomer = change.recorded, transfers, let transferProof, record.appUserID != nil {
            guard try await provesAccount(transferProof, of: record, app: app) else {
                throw ServerError(
                    .conflict,
                    "transaction \(record.transactionID) belongs to another customer, and this upload does not show that its device is signed in to the Apple Account that bought it: restore purchases under that account",
                    cause: "purchasedByAnotherAccount")
            }
            change = try await ingested(transferring: true)
        }
        if case .ownedByAnotherCustomer = change.recorded, !transfers || record.appUserID == nil {
            throw ServerError(
                .conflict, "transaction \(record.transactionID) belongs to another customer",
                cause: "ownedByAnotherCustomer")
        }
        var outcome = IngestOutcome(isNew: false, revoked: change.revoked, transferredFrom: change.transferredFrom)
        if case .recorded = change.recorded { outcome.isNew = true }
        if outcome.isNew { ledgerEvent("transaction.recorded", record, source: record.source.rawValue) }
        // An app that sells on the web too learns of a customer who subscribed in both stores.
        if outcome.isNew, app.stripe != nil, record.productType == .autoRenewableSubscription {
            try await noteDuplicateSubscriptions(of: record, app: app)
        }
        if outcome.revoked {
            ledgerEvent(
                "transaction.revoked", record, source: record.source.rawValue,
                extra: ["revocation_percentage": "\(record.revokedShare)"])
        }
        if let previous = outcome.transferredFrom {
            ledgerEvent(
                "transaction.transferred", record, source: record.source.rawValue, extra: ["from": "\(previous)"])
        }
        return (outcome, change.summary)
    }

    /// Writes a `subscription.duplicated` event when `record`, the first period of a subscription,
    /// gives its customer an entitlement that an active subscription of another store gives
    /// already: an app never sells one subscription twice, and this says when it happened anyway.
    private func noteDuplicateSubscriptions(of record: RecordedTransaction, app: AppConfiguration) async throws {
        guard let owner = try await purchases.transaction(id: record.transactionID)?.appUserID else { return }
        let transactions = try await customers.customer(bundleID: app.bundleID, appUserID: owner).transactions
        guard transactions.filter({ $0.originalTransactionID == record.originalTransactionID }).count == 1 else {
            return
        }
        let duplicated = EntitlementRules.duplicatedSubscriptions(
            transactions, grants: app.grants ?? grants, at: now())
        for (entitlement, subscriptions) in duplicated.sorted(by: { $0.key < $1.key })
        where subscriptions.contains(where: { $0.originalTransactionID == record.originalTransactionID }) {
            try await outbox.recordDuplicateSubscription(
                DuplicateSubscription(
                    bundleID: app.bundleID, appUserID: owner, entitlement: entitlement, subscriptions: subscriptions),
                at: now())
            ledgerEvent("subscription.duplicated", record, source: record.source.rawValue, extra: ["entitlement": "\(entitlement)"])
        }
    }

    /// What an app's upload offers as proof that its device is signed in to the Apple Account that
    /// bought a transaction.
    struct TransferProof: Sendable {
        /// The transaction's `appTransactionId` (its payload's).
        var appTransactionID: String?
        /// The device's app transaction (JWS), when the upload carries one.
        var signedAppTransaction: String?
    }

    /// Whether `proof` shows that the device that uploaded `record` (for `record.appUserID`) is
    /// signed in to the Apple Account that bought it: the transaction's app account token is the
    /// uploader's own (derived from their app user ID, as the SDK sets it on every purchase), or
    /// the upload's app transaction verifies for the app and has the transaction's
    /// `appTransactionId` (the same for every install of the app under one Apple Account).
    func provesAccount(
        _ proof: TransferProof, of record: RecordedTransaction, app: AppConfiguration
    ) async throws(ServerError) -> Bool {
        if let uploader = record.appUserID, let token = record.appAccountToken,
            token.lowercased() == AppAccountToken.derived(from: uploader).uuidString.lowercased()
        {
            return true
        }
        guard let jws = proof.signedAppTransaction, let expected = proof.appTransactionID, !expected.isEmpty else {
            return false
        }
        return try await verifiedAppTransaction(jws, app: app).appTransactionID == expected
    }

    /// The call that tells Apple `owner`'s app account token for the purchase of `record` (Set App
    /// Account Token, made by ``AppleRequestSender``): one ID per purchase and token.
    private func appAccountTokenRequest(
        of owner: String, on record: RecordedTransaction, app: AppConfiguration
    ) -> AppleRequestRecord {
        let token = AppAccountToken.derived(from: owner).uuidString.lowercased()
        let now = now()
        return AppleRequestRecord(
            id: "appAccountToken:\(record.originalTransactionID):\(token)", kind: .appAccountToken,
            bundleID: app.bundleID, transactionID: record.originalTransactionID, environment: record.environment,
            detail: token, requestedAt: now, nextAttemptAt: now)
    }

    func ledgerEvent(
        _ type: String, _ record: RecordedTransaction, source: String, extra: Logger.Metadata = [:]
    ) {
        metrics?.ledgerEvent(type)
        // The line's metadata is built only when the line is written.
        guard logger.logLevel <= .info else { return }
        var metadata: Logger.Metadata = [
            "event": "\(type)", "bundle_id": "\(record.bundleID)", "transaction_id": "\(record.transactionID)",
            "product_id": "\(record.productID)", "app_user_id": "\(record.appUserID.map(CustomerIDRedaction.redacted) ?? "")", "source": "\(source)",
        ]
        metadata.merge(extra) { _, new in new }
        logger.info("ledger", metadata: metadata)
    }

    /// The customer's whole state now, entitlements derived.
    public func customer(bundleID: String, appUserID: String) async throws -> EntitledCustomer {
        let app = try app(bundleID)
        let state = try await customers.customer(bundleID: bundleID, appUserID: appUserID)
        let consent = try await customers.consentRescission(bundleID: bundleID, appUserID: appUserID)
        let entitlements = EntitlementRules.entitlements(
            transactions: state.transactions, grants: app.grants ?? grants,
            renewals: try await renewals(of: state.transactions, app: app), consent: consent, at: now())
        var customer = EntitledCustomer(
            state: state, entitlements: entitlements, consentRescission: consent,
            consentWithheld: consent.map {
                EntitlementRules.withholds($0, transactions: state.transactions, grants: app.grants ?? grants)
            } ?? false)
        customer.duplicatedSubscriptions = EntitlementRules.duplicatedSubscriptions(
            state.transactions, grants: app.grants ?? grants, at: now())
        return customer
    }

    /// A bounded view of the customer (balances, the `recent` newest transactions, the count) and
    /// the entitlements derived from every transaction that can grant access.
    public func customerSummary(
        bundleID: String, appUserID: String, recent: Int, withJWS: Bool = true
    ) async throws -> (summary: CustomerSummary, entitlements: [Entitlement]) {
        try await customerSummary(app: try app(bundleID), appUserID: appUserID, recent: recent, withJWS: withJWS)
    }

    /// ``customerSummary(bundleID:appUserID:recent:withJWS:)`` for an app the caller has looked up.
    ///
    /// The entitlements say whether a parent withdrew consent (one more indexed read). The answer
    /// to an upload (``submit(_:app:appUserID:recent:withJWS:signedAppTransaction:)``) does not
    /// read it, so that recording a purchase, or its duplicate, costs what it did: the App Store
    /// opens an app for a minor only while a parent consents, and a new purchase lifts a
    /// withdrawal anyway.
    public func customerSummary(
        app: AppConfiguration, appUserID: String, recent: Int, withJWS: Bool = true
    ) async throws -> (summary: CustomerSummary, entitlements: [Entitlement]) {
        try await customerSummary(app: app, appUserID: appUserID, recent: recent, withJWS: withJWS, readsConsent: true)
    }

    private func customerSummary(
        app: AppConfiguration, appUserID: String, recent: Int, withJWS: Bool, readsConsent: Bool
    ) async throws -> (summary: CustomerSummary, entitlements: [Entitlement]) {
        let summary = try await purchases.customerSummary(
            bundleID: app.bundleID, appUserID: appUserID, recent: recent, withJWS: withJWS)
        let consent =
            readsConsent ? try await customers.consentRescission(bundleID: app.bundleID, appUserID: appUserID) : nil
        return (summary, try await entitlements(of: summary, app: app, consent: consent))
    }

    /// What the transactions of `summary` that can grant access grant now.
    private func entitlements(
        of summary: CustomerSummary, app: AppConfiguration, consent: ConsentRescission? = nil
    ) async throws -> [Entitlement] {
        EntitlementRules.entitlements(
            transactions: summary.accessTransactions, grants: app.grants ?? grants,
            renewals: try await renewals(of: summary.accessTransactions, app: app), consent: consent, at: now())
    }

    /// The renewal state of the subscriptions among `transactions` that grant an entitlement: one
    /// indexed read, and none for a customer without such a subscription.
    private func renewals(
        of transactions: [RecordedTransaction], app: AppConfiguration
    ) async throws -> [String: SubscriptionRenewal] {
        let catalog = app.grants ?? grants
        let subscriptions = transactions.filter { transaction in
            guard transaction.productType == .autoRenewableSubscription else { return false }
            return catalog.grants(for: transaction.productID).contains { grant in
                if case .entitlement = grant { true } else { false }
            }
        }
        guard !subscriptions.isEmpty else { return [:] }
        return try await purchases.subscriptionRenewals(
            bundleID: app.bundleID, originalTransactionIDs: subscriptions.map(\.originalTransactionID))
    }

    /// Spends currency, once per idempotency key, never below zero. The ledger checks the amount
    /// and the key: what it refuses is 400 `invalidRequest`.
    public func spend(
        bundleID: String, appUserID: String, currency: String, amount: Int64, idempotencyKey: String
    ) async throws -> SpendOutcome {
        _ = try app(bundleID)
        let outcome: SpendOutcome
        do {
            outcome = try await balances.spend(
                bundleID: bundleID, appUserID: appUserID, currency: currency, amount: amount,
                idempotencyKey: idempotencyKey, at: now())
        } catch let error as LedgerStoreError where error.code == .invalidArgument { throw ServerError(error) }
        if case .spent(let balance) = outcome {
            metrics?.ledgerEvent("balance.spent")
            logger.info(
                "ledger",
                metadata: [
                    "event": "balance.spent", "bundle_id": "\(bundleID)", "app_user_id": "\(CustomerIDRedaction.redacted(appUserID))",
                    "currency": "\(currency)", "amount": "\(amount)", "balance": "\(balance)",
                ])
        }
        return outcome
    }

    /// Verifies a signed transaction of `app`: parsed and decoded once, the environment read from
    /// the payload picks the verifier, which then checks chain, signature, bundle ID and environment.
    ///
    /// With revocation checks the chain must be valid now, so a transaction that arrives long
    /// after it was signed (an app that was offline for weeks) can carry a leaf that has expired
    /// since. Such a transaction is fetched again from the App Store Server API, which signs it
    /// afresh; that answer is verified and returned in its place (the second value is the JWS to
    /// record). Without API access, or when the fetch fails, the upload is refused with a
    /// retryable 503: nothing is lost, the app posts it again later.
    func verifyTransaction(
        _ jws: String, app: AppConfiguration
    ) async throws(ServerError) -> (payload: JWSTransactionDecodedPayload, jws: String) {
        let (compact, payload) = try Self.decode(jws, as: JWSTransactionDecodedPayload.self)
        guard let environment = payload.environment else {
            throw ServerError(.verificationFailed, "the payload names no environment", cause: "malformedInput")
        }
        let verifier = try verifier(app, environment)
        do {
            return (try await verifier.verify(compact, decoded: payload, checking: [.bundleID, .environment]), jws)
        } catch where error.code == .certificateExpired && verifier.jwsVerifier.revocationMode != .off {
            return try await fetchAgain(payload, app: app, environment: environment, verifier: verifier, cause: error)
        } catch {
            throw ServerError(verification: error)
        }
    }

    /// Get Transaction Info for a transaction whose leaf has expired, verified by the same verifier.
    private func fetchAgain(
        _ stale: JWSTransactionDecodedPayload, app: AppConfiguration, environment: AppStoreEnvironment,
        verifier: SignedDataVerifier, cause: AppStoreSecurityError
    ) async throws(ServerError) -> (payload: JWSTransactionDecodedPayload, jws: String) {
        guard let transactionID = stale.transactionID else {
            throw ServerError(verification: cause)
        }
        guard let access = app.serverAPI else {
            throw ServerError(
                .appleUnavailable,
                "transaction \(transactionID) was signed by a certificate that has expired since, and no App Store Server API key is configured to fetch it again: \(cause)",
                cause: "\(cause.code)")
        }
        let fetched: TransactionInfoResponse
        do {
            fetched = try await AppStoreServerAPIClient(access: access, exchange: exchange, bundleID: app.bundleID, now: realNow)
                .get(
                    TransactionInfoResponse.self, .getTransactionInfo, path: "inApps/v1/transactions/\(transactionID)",
                    environment: environment)
        } catch {
            throw ServerError(
                .appleUnavailable,
                "transaction \(transactionID) was signed by a certificate that has expired since, and fetching it again failed: \(error.message)",
                cause: "\(cause.code)")
        }
        guard let signed = fetched.signedTransactionInfo else {
            throw ServerError(
                .appleUnavailable, "the App Store Server API answered transaction \(transactionID) without a signed transaction",
                cause: "\(cause.code)")
        }
        let payload: JWSTransactionDecodedPayload
        do {
            payload = try await verifier.verifyTransaction(signed)
        } catch {
            let failure = ServerError(verification: error, context: "transaction \(transactionID) fetched again")
            throw error.isRetryable ? failure : ServerError(.appleUnavailable, failure.message, cause: failure.cause)
        }
        guard payload.transactionID == transactionID else {
            throw ServerError(
                .appleUnavailable, "the App Store Server API answered another transaction than \(transactionID)",
                cause: "\(cause.code)")
        }
        return (payload, signed)
    }

    /// A JWS parsed and its payload decoded, before verification: the claims choose the app and
    /// the verifier (as Apple's libraries decode before they verify); the verifier then checks them.
    static func decode<Payload: Decodable>(
        _ jws: String, as type: Payload.Type
    ) throws(ServerError) -> (CompactJWS, Payload) {
        do {
            let compact = try CompactJWS(jws)
            return (compact, try compact.decodePayload(as: type))
        } catch {
            throw ServerError(verification: error)
        }
    }

    static func record(
        from payload: JWSTransactionDecodedPayload, jws: String?, appUserID: String?, source: TransactionSource,
        at date: Date
    ) throws(ServerError) -> RecordedTransaction {
        guard let transactionID = payload.transactionID, let productID = payload.productID,
            let bundleID = payload.bundleID, let purchaseDate = payload.purchaseDate
        else {
            throw ServerError(
                .verificationFailed, "the transaction lacks transactionId, productId, bundleId or purchaseDate",
                cause: "malformedInput")
        }
        return RecordedTransaction(
            transactionID: transactionID, originalTransactionID: payload.originalTransactionID ?? transactionID,
            bundleID: bundleID, appUserID: appUserID, productID: productID, productType: payload.type ?? .nonConsumable,
            quantity: payload.quantity ?? 1, purchaseDate: purchaseDate, expiresDate: payload.expiresDate,
            revocationDate: payload.revocationDate, revocationReason: payload.revocationReason,
            revocationType: payload.revocationType, revocationPercentage: payload.revocationPercentage,
            environment: payload.environment ?? .sandbox, appAccountToken: payload.appAccountToken,
            signedTransaction: jws, source: source, recordedAt: date,
            periodType: payload.type == .autoRenewableSubscription
                ? Entitlement.PeriodType(offerType: payload.offerType, discountType: payload.offerDiscountType) : nil,
            price: payload.price, currency: payload.currency, storefront: payload.storefront,
            inAppOwnershipType: payload.inAppOwnershipType, offerDiscountType: payload.offerDiscountType)
    }
}
