import Crypto
import Foundation
import KakinCore

/// The ledger's rules that need no database: what a purchase credits, what a refund takes back,
/// what a purchase seen before means. Each engine applies them in its own statements.
package enum LedgerRules {
    /// Checks what an ingest asks before anything is written.
    package static func validate(_ change: LedgerIngest) throws {
        if let summary = change.summary, summary.recent < 0 {
            throw LedgerStoreError(.invalidArgument, "recent must not be negative")
        }
        _ = try credits(of: change.transaction, grants: change.grants, quantity: change.transaction.quantity)
    }

    /// Checks an alias: `anonymousID` must be an anonymous ID exactly as the SDK makes it (cause
    /// `notAnonymous`), `appUserID` an identified customer's (cause `anonymousTarget`).
    package static func validateAlias(_ anonymousID: String, to appUserID: String) throws {
        guard AnonymousAppUserID.isWellFormed(anonymousID) else {
            throw LedgerStoreError(
                .invalidArgument, "only an anonymous customer (\(AnonymousAppUserID.prefix)…) can become another",
                cause: "notAnonymous")
        }
        guard !appUserID.isEmpty, !AnonymousAppUserID.isAnonymous(appUserID) else {
            throw LedgerStoreError(
                .invalidArgument, "an alias names an identified customer, not '\(appUserID)'", cause: "anonymousTarget")
        }
    }

    /// The longest idempotency key a spend takes, in characters.
    package static let spendKeyLimit = 200

    /// Checks a spend: a positive amount, and a key of 1 to ``spendKeyLimit`` characters that
    /// makes it happen once.
    package static func validateSpend(amount: Int64, idempotencyKey: String) throws {
        guard amount > 0 else { throw LedgerStoreError(.invalidArgument, "a spend amount must be positive") }
        guard !idempotencyKey.isEmpty, idempotencyKey.count <= spendKeyLimit else {
            throw LedgerStoreError(
                .invalidArgument, "a spend needs an idempotency key of 1 to \(spendKeyLimit) characters")
        }
    }

    /// The ledger line's unique key for a spend of `bundleID` under the caller's `idempotencyKey`:
    /// `spend:<bundleID>:<idempotencyKey>`. The app is part of it, so each app's keys are its own:
    /// another app's spend with the same key is another spend. (Bundle IDs hold no `:`.)
    package static func spendKey(bundleID: String, idempotencyKey: String) -> String {
        "spend:\(bundleID):\(idempotencyKey)"
    }

    /// The longest ID (an app's bundle ID, a Stripe event's or its object's) and Stripe event type
    /// the ledger takes, in characters: Stripe's IDs are at most 255.
    package static let stripeTextLimit = 255

    /// The longest reason a Stripe event failed to apply that the ledger keeps, in characters.
    package static let stripeFailureLimit = 2_000

    /// Checks an app and a Stripe event ID: each 1 to ``stripeTextLimit`` characters.
    package static func validateStripeEvent(bundleID: String, eventID: String) throws {
        try validateStripeText(bundleID, "a bundle ID")
        try validateStripeText(eventID, "a Stripe event ID")
    }

    /// Checks a Stripe event before it is recorded: its app, ID and type of 1 to
    /// ``stripeTextLimit`` characters, an object ID, when given, as well; a payload; attempts not
    /// below zero; a failure of at most ``stripeFailureLimit`` characters, only on an event still
    /// to apply with a failed attempt counted.
    package static func validateStripeEvent(_ event: StripeEventRecord) throws {
        try validateStripeEvent(bundleID: event.bundleID, eventID: event.eventID)
        try validateStripeText(event.type, "a Stripe event type")
        if let objectID = event.objectID { try validateStripeText(objectID, "a Stripe object ID") }
        guard !event.payload.isEmpty else {
            throw LedgerStoreError(.invalidArgument, "Stripe event \(event.eventID) has no payload")
        }
        guard event.attempts >= 0 else {
            throw LedgerStoreError(.invalidArgument, "a Stripe event's attempts must not be negative")
        }
        if let failure = event.failure {
            try validateStripeFailure(failure)
            guard event.appliedAt == nil, event.attempts > 0 else {
                throw LedgerStoreError(
                    .invalidArgument, "a Stripe event's failure needs a failed attempt and no application")
            }
        }
    }

    /// Checks why a Stripe event failed to apply: at most ``stripeFailureLimit`` characters.
    package static func validateStripeFailure(_ failure: String) throws {
        guard failure.count <= stripeFailureLimit else {
            throw LedgerStoreError(
                .invalidArgument, "a Stripe event's failure must be at most \(stripeFailureLimit) characters")
        }
    }

    /// Checks how many Stripe events a read returns: at least one.
    package static func validateStripeLimit(_ limit: Int) throws {
        guard limit >= 1 else { throw LedgerStoreError(.invalidArgument, "limit must be at least 1, not \(limit)") }
    }

    /// The error for a Stripe event the ledger does not hold for the app (cause `unknownStripeEvent`).
    package static func unknownStripeEvent(bundleID: String, eventID: String) -> LedgerStoreError {
        LedgerStoreError(
            .invalidArgument, "no Stripe event \(eventID) is recorded for \(bundleID)", cause: "unknownStripeEvent")
    }

    /// Checks an ID or event type (`name` says which, for the message): 1 to ``stripeTextLimit``
    /// characters.
    package static func validateStripeText(_ text: String, _ name: String) throws {
        guard !text.isEmpty, text.count <= stripeTextLimit else {
            throw LedgerStoreError(.invalidArgument, "\(name) must be 1 to \(stripeTextLimit) characters")
        }
    }

    /// Checks a content package against its bytes: not empty, and the size and SHA-256 it states;
    /// the SHA-256 in lowercase hex.
    package static func validateContent(_ package: ContentPackage, bytes: Data) throws -> String {
        let name = "content \(package.productID) \(package.version)"
        guard !bytes.isEmpty else { throw LedgerStoreError(.invalidArgument, "\(name) is empty") }
        let digest = SHA256.hash(data: bytes).hexDigits
        guard package.size == Int64(bytes.count), package.sha256.lowercased() == digest else {
            throw LedgerStoreError(.invalidArgument, "\(name): size or SHA-256 does not match")
        }
        return digest
    }

    /// What a transaction credits its owner: amount × `quantity` of each currency its grants
    /// name, one credit per currency (the same currency listed twice adds up), in the order of
    /// the currencies' names, so credits are always written in the same order. Each is credited
    /// once, under the key `grant:<transactionId>:<currency>`.
    ///
    /// - Throws: ``LedgerStoreError/Code/invalidArgument`` for a quantity below one, a grant
    ///   without a name or with a negative amount, or amounts that overflow.
    package static func credits(
        of transaction: RecordedTransaction, grants: [Grant], quantity: Int
    ) throws -> [CurrencyCredit] {
        guard quantity > 0 else {
            throw LedgerStoreError(.invalidArgument, "quantity must be at least 1, not \(quantity)")
        }
        var byCurrency: [String: Int64] = [:]
        for case .currency(let currency, let amount) in grants {
            guard !currency.isEmpty, amount >= 0 else {
                throw LedgerStoreError(.invalidArgument, "a currency grant needs a name and a non-negative amount")
            }
            let (sum, overflow) = byCurrency[currency, default: 0].addingReportingOverflow(amount)
            guard !overflow else { throw LedgerStoreError(.invalidArgument, "the grants of \(currency) overflow") }
            byCurrency[currency] = sum
        }
        return try byCurrency.filter { $0.value > 0 }.sorted { $0.key < $1.key }.map { currency, unit in
            let (amount, overflow) = unit.multipliedReportingOverflow(by: Int64(quantity))
            guard !overflow else { throw LedgerStoreError(.invalidArgument, "\(unit) \(currency) × \(quantity) overflows") }
            return CurrencyCredit(
                currency: currency, amount: amount, idempotencyKey: "grant:\(transaction.transactionID):\(currency)")
        }
    }

    /// The part of a credit of `amount` units that a refund of `share` milliunits of a percent
    /// takes back, rounded down to whole units.
    ///
    /// Rounding down keeps a fraction of a unit with the customer rather than taking back one that
    /// was not refunded (a 33.333 % refund of 100 points takes back 33). Nothing is lost overall:
    /// each later, larger refund of the same transaction takes back its own share less what was
    /// already taken, so a full refund after any number of partial ones takes back exactly the rest.
    /// Computed without overflow for any non-negative `amount`.
    package static func creditShare(_ amount: Int64, share: Int) -> Int64 {
        let whole = Int64(RecordedTransaction.wholeShare)
        let share = Int64(share)
        return amount / whole * share + amount % whole * share / whole
    }

    /// The idempotency key of what a revocation of `share` takes back of a transaction's credit in
    /// `currency`: one key for the whole, one per share for parts. A revocation after a refund
    /// reversal (`reversedAt`, the reversal's signed date in milliseconds) has keys of its own,
    /// `…:reversed:<reversedAt>`, so a transaction refunded again after a reversal is taken back again.
    package static func clawbackKey(
        transactionID: String, currency: String, share: Int, reversedAt: Int64? = nil
    ) -> String {
        var key = "clawback:\(transactionID):\(currency)"
        if share != RecordedTransaction.wholeShare { key += ":\(share)" }
        if let reversedAt { key += ":reversed:\(reversedAt)" }
        return key
    }

    /// The start of the idempotency keys of reinstatement credits, which give back what a reversed
    /// refund took; a revocation takes back a share of a transaction's other credit lines only.
    package static let reinstatementKeyPrefix = "reinstate:"

    /// The idempotency key of the credit that gives back, in `currency`, what the revocations of a
    /// transaction took before the refund reversal signed at `reversedAt` (milliseconds):
    /// `reinstate:<transactionId>:<currency>:<reversedAt>`, once per reversal.
    package static func reinstatementKey(transactionID: String, currency: String, reversedAt: Int64) -> String {
        "\(reinstatementKeyPrefix)\(transactionID):\(currency):\(reversedAt)"
    }

    /// What recording a transaction the ledger holds for `storedOwner` means for a caller who
    /// says it belongs to `claimed`.
    package static func outcome(storedOwner: String, claimedBy claimed: String?) -> RecordOutcome {
        if let claimed, claimed != storedOwner { return .ownedByAnotherCustomer(storedOwner) }
        return .duplicate(ownerAssigned: false)
    }

    /// The body of the `transaction.reinstated` event of a stored transaction whose refund Apple
    /// reversed at `reversedAt` (milliseconds).
    static func reinstatedEvent(_ row: TransactionRow, reversedAt: Int64) -> TransactionEventPayload {
        TransactionEventPayload(
            transactionId: row.transactionID, originalTransactionId: row.originalTransactionID,
            metricsKeptInWrite: PurchaseMetricChanges.keptInWrite(productType: row.productType),
            productId: row.productID, productType: row.productType, quantity: Int(row.quantity),
            environment: row.environment, revoked: false, reinstatedDate: reversedAt, store: row.store)
    }

    /// The body of the `transaction.recorded` event of `transaction`.
    static func recordedEvent(_ transaction: RecordedTransaction, ownerAssigned: Bool) -> TransactionEventPayload {
        TransactionEventPayload(
            transactionId: transaction.transactionID, originalTransactionId: transaction.originalTransactionID,
            metricsKeptInWrite: PurchaseMetricChanges.keptInWrite(productType: transaction.productType.rawValue),
            productId: transaction.productID, productType: transaction.productType.rawValue,
            quantity: transaction.quantity, environment: transaction.environment.rawValue,
            source: transaction.source.rawValue, ownerAssigned: ownerAssigned,
            revoked: transaction.revocationDate != nil, store: transaction.store.rawValue)
    }
}

/// Who owns a recorded transaction, as far as the ledger knows.
enum StoredOwner: Equatable, Sendable {
    /// The ledger does not hold the transaction.
    case missing
    /// The ledger holds it without an owner (a notification came first).
    case unknown
    case known(String)

    /// The owner a stored row names, or none.
    init(_ owner: String?) { self = owner.map(StoredOwner.known) ?? .unknown }
}

/// One currency a transaction credits: the amount for the whole quantity, and the key that makes
/// it happen once.
package struct CurrencyCredit: Hashable, Sendable {
    package var currency: String
    package var amount: Int64
    package var idempotencyKey: String

    /// The body of the `balance.credited` event, with the balance after the credit.
    func event(transactionID: String, balance: Int64) -> BalanceEventPayload {
        BalanceEventPayload(
            currency: currency, amount: amount, balance: balance, idempotencyKey: idempotencyKey,
            transactionId: transactionID)
    }
}
