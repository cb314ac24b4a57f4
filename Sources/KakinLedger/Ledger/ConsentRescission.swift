public import AppStoreModels
public import Foundation

/// The customer data an app's configuration names as kept under a parent's consent: what the
/// ledger erases for the customer when the consent is rescinded (`RESCIND_CONSENT`).
///
/// Purchases, balances and ledger lines are never among them: they are records of what was paid,
/// which the App Store keeps too, and the access they give is withheld instead (see
/// ``ConsentRescission``).
public enum ConsentScopedData: String, Codable, Hashable, Sendable, CaseIterable {
    /// The anonymous IDs the customer's devices used before signing in (`customer_aliases`):
    /// requests naming them are no longer served for the customer.
    case aliases
    /// The links of the customer's app downloads (app transactions) to the customer
    /// (`app_transactions`).
    case appTransactions
}

/// A parent's withdrawal of consent for a minor's use of an app (`RESCIND_CONSENT`), as the ledger
/// keeps it: one row per app download, the latest rescission Apple signed for it.
///
/// While it stands, the customer's entitlements are inactive and say why
/// (`Entitlement.consentRescindedDate`). It stands until the customer makes a new purchase after
/// it (``isLifted(by:)``): the App Store lets a child open the app again, and buy in it, only once a
/// parent consents again.
public struct ConsentRescission: Codable, Hashable, Sendable {
    /// The app.
    public var bundleID: String
    /// The app download (app transaction) the notification named.
    public var appTransactionID: String
    /// The customer that app download was linked to when the notification arrived; `nil` when it
    /// was linked to none (then no access is withheld: the server does not know whose it is).
    public var appUserID: String?
    /// The App Store environment of the app download.
    public var environment: AppStoreEnvironment
    /// When consent was rescinded: the notification's `signedDate`.
    public var rescindedAt: Date
    /// The notification that said so.
    public var notificationUUID: String
    /// When the ledger recorded it.
    public var recordedAt: Date
    /// The consent-scoped data erased for the customer when it was recorded, in
    /// ``ConsentScopedData`` order.
    public var erased: [ConsentScopedData]

    /// Creates a rescission.
    public init(
        bundleID: String, appTransactionID: String, appUserID: String?, environment: AppStoreEnvironment,
        rescindedAt: Date, notificationUUID: String, recordedAt: Date, erased: [ConsentScopedData] = []
    ) {
        self.bundleID = bundleID
        self.appTransactionID = appTransactionID
        self.appUserID = appUserID
        self.environment = environment
        self.rescindedAt = rescindedAt
        self.notificationUUID = notificationUUID
        self.recordedAt = recordedAt
        self.erased = erased
    }

    /// Whether `transactions` hold a new purchase made after the rescission: the first transaction
    /// of a purchase (its own original transaction, so not a renewal, a restore or a plan change)
    /// dated later. A parent who lets the child buy again has consented again.
    public func isLifted(by transactions: some Sequence<RecordedTransaction>) -> Bool {
        transactions.contains { $0.transactionID == $0.originalTransactionID && $0.purchaseDate > rescindedAt }
    }
}

/// What recording a rescission did (``CustomerLedger/recordConsentRescission(_:erasing:)``).
public struct ConsentRescissionOutcome: Hashable, Sendable {
    /// Whether it was recorded now: `false` when a rescission Apple signed at the same moment or
    /// later is already recorded for this app download (the same notification again changes
    /// nothing).
    public var recorded: Bool
    /// How many rows of each consent-scoped data were erased.
    public var erasedCounts: [ConsentScopedData: Int]

    /// Creates an outcome.
    public init(recorded: Bool, erasedCounts: [ConsentScopedData: Int] = [:]) {
        self.recorded = recorded
        self.erasedCounts = erasedCounts
    }
}
