import KakinCore

/// The outbox event types the ledger writes.
enum LedgerEventType {
    static let transactionRecorded = "transaction.recorded"
    static let transactionRevoked = "transaction.revoked"
    static let transactionReinstated = "transaction.reinstated"
    static let transactionTransferred = "transaction.transferred"
    static let balanceCredited = "balance.credited"
    static let balanceSpent = "balance.spent"
    static let balanceClawedBack = "balance.clawed_back"
    static let customerAliased = "customer.aliased"
    static let customerConsentRescinded = "customer.consent_rescinded"
    static let subscriptionDuplicated = "subscription.duplicated"
}

/// An outbox event's body, written straight to JSON bytes (the same bytes `JSONEncoder` writes
/// with sorted keys: a test compares them). Customer IDs in a body, like the event's own customer,
/// are written as ``CustomerIDRedaction`` redacts them: no anonymous ID whole.
protocol EventPayload: Encodable {
    func write(to output: inout JSONOutput)
    /// The original transaction ID whose metrics the event's write changes, if any: the write
    /// marks it for the metrics job (`metric_pending`) in the same transaction.
    var changedPurchase: String? { get }
}

extension EventPayload {
    var changedPurchase: String? { nil }
}

extension EventPayload {
    /// The body as the outbox stores it.
    var json: String {
        var output = JSONOutput(capacity: 256)
        write(to: &output)
        return String(decoding: output.bytes, as: UTF8.self)
    }
}

/// Body of `transaction.recorded`, `transaction.revoked` and `transaction.reinstated` events.

struct TransactionEventPayload: EventPayload {
    var transactionId: String
    var originalTransactionId: String
    /// Whether the write keeps the transaction's metrics itself (``PurchaseMetricChanges``), so
    /// the job need not work its purchase out again.
    var metricsKeptInWrite = false
    var changedPurchase: String? { metricsKeptInWrite ? nil : originalTransactionId }
    var productId: String
    var productType: String?
    var quantity: Int?
    var environment: String?
    var source: String?
    var ownerAssigned: Bool?
    var revoked: Bool?
    var revocationDate: Int64?
    var revocationReason: Int?
    /// The refunded share in milliunits of a percent, on `transaction.revoked`.
    var revocationPercentage: Int?
    /// When Apple signed the refund reversal, on `transaction.reinstated`.
    var reinstatedDate: Int64?
    /// Where the customer paid (``PurchaseStore``'s raw value).
    var store: String?

    private enum CodingKeys: String, CodingKey {
        case transactionId, originalTransactionId, productId, productType, quantity, environment, source
        case ownerAssigned, revoked, revocationDate, revocationReason, revocationPercentage, reinstatedDate, store
    }

    func write(to output: inout JSONOutput) {
        output.object { output in
            output.field("environment", environment)
            output.field("originalTransactionId", originalTransactionId)
            output.field("ownerAssigned", ownerAssigned)
            output.field("productId", productId)
            output.field("productType", productType)
            output.field("quantity", quantity)
            output.field("reinstatedDate", reinstatedDate)
            output.field("revocationDate", revocationDate)
            output.field("revocationPercentage", revocationPercentage)
            output.field("revocationReason", revocationReason)
            output.field("revoked", revoked)
            output.field("source", source)
            output.field("store", store)
            output.field("transactionId", transactionId)
        }
    }
}

/// Body of `balance.*` events.
struct BalanceEventPayload: EventPayload {
    var currency: String
    var amount: Int64
    var balance: Int64
    var idempotencyKey: String
    var transactionId: String?
    var shortfall: Int64?

    func write(to output: inout JSONOutput) {
        output.object { output in
            output.field("amount", amount)
            output.field("balance", balance)
            output.field("currency", currency)
            output.field("idempotencyKey", idempotencyKey)
            output.field("shortfall", shortfall)
            output.field("transactionId", transactionId)
        }
    }
}

/// Body of `transaction.transferred` events; `from` and `to` redacted.
struct TransferEventPayload: EventPayload {
    var originalTransactionId: String
    /// Whether the write keeps the moved transactions' metrics itself (``PurchaseMetricChanges``).
    var metricsKeptInWrite: Bool
    var changedPurchase: String? { metricsKeptInWrite ? nil : originalTransactionId }
    var from: String
    var to: String
    var transactionIds: [String]

    private enum CodingKeys: String, CodingKey { case originalTransactionId, from, to, transactionIds }

    init(
        originalTransactionId: String, from: String, to: String, transactionIds: [String],
        metricsKeptInWrite: Bool = false
    ) {
        self.originalTransactionId = originalTransactionId
        self.metricsKeptInWrite = metricsKeptInWrite
        self.from = CustomerIDRedaction.redacted(from)
        self.to = CustomerIDRedaction.redacted(to)
        self.transactionIds = transactionIds
    }

    func write(to output: inout JSONOutput) {
        output.object { output in
            output.field("from", from)
            output.field("originalTransactionId", originalTransactionId)
            output.field("to", to)
            output.key("transactionIds")
            output.array(transactionIds) { output, id in output.string(id) }
        }
    }
}

/// Body of `customer.aliased` events; `alias` (the anonymous ID) redacted.
struct AliasEventPayload: EventPayload {
    var alias: String
    var appUserId: String
    var balances: [String: Int64]
    var created: Bool
    var keptPurchases: [String]
    var transactionIds: [String]
    var transferredPurchases: [String]

    init(alias: String, appUserId: String, move: CustomerAliasMove) {
        self.alias = CustomerIDRedaction.redacted(alias)
        self.appUserId = CustomerIDRedaction.redacted(appUserId)
        balances = move.balances
        created = move.created
        keptPurchases = move.keptPurchases
        transactionIds = move.transactionIDs
        transferredPurchases = move.transferredPurchases
    }

    func write(to output: inout JSONOutput) {
        output.object { output in
            output.field("alias", alias)
            output.field("appUserId", appUserId)
            output.field("balances", balances)
            output.field("created", created)
            output.key("keptPurchases")
            output.array(keptPurchases) { output, id in output.string(id) }
            output.key("transactionIds")
            output.array(transactionIds) { output, id in output.string(id) }
            output.key("transferredPurchases")
            output.array(transferredPurchases) { output, id in output.string(id) }
        }
    }
}

/// Body of `customer.consent_rescinded` events: the app download, when consent was rescinded,
/// and what was erased (rows per consent-scoped data); `appUserId` redacted.
struct ConsentRescindedEventPayload: EventPayload {
    var appUserId: String
    var appTransactionId: String
    var environment: String
    var rescindedDate: Int64
    var erased: [String: Int64]

    init(_ rescission: ConsentRescission, appUserID: String, erased: [ConsentScopedData: Int]) {
        appUserId = CustomerIDRedaction.redacted(appUserID)
        appTransactionId = rescission.appTransactionID
        environment = rescission.environment.rawValue
        rescindedDate = LedgerTime.milliseconds(rescission.rescindedAt)
        self.erased = Dictionary(uniqueKeysWithValues: erased.map { ($0.key.rawValue, Int64($0.value)) })
    }

    func write(to output: inout JSONOutput) {
        output.object { output in
            output.field("appTransactionId", appTransactionId)
            output.field("appUserId", appUserId)
            output.field("environment", environment)
            output.field("erased", erased)
            output.field("rescindedDate", rescindedDate)
        }
    }
}
