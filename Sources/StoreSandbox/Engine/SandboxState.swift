public import AppStoreModels
public import Foundation

/// Everything the sandbox remembers: testers, transactions and the counters that number them.
///
/// The collections that grow with use are ``RecordLog``s and ``RecordMap``s: they find records by
/// key or by tester without scanning, and remember what changed, so a store writes only the rows
/// that changed since the last save (see ``changes(encoder:)``). The state still encodes as one
/// plain JSON document, which is how older sandboxes kept it (`state.json`).
public struct SandboxState: Codable, Hashable, Sendable {
    /// Testers by ID.
    public var testers: RecordMap<SandboxTester>
    /// Every transaction, in the order they happened; by ID, tester, original transaction and order.
    public var transactions: RecordLog<SandboxTransaction>
    /// Each tester's app download: its `appTransactionId` and original purchase date.
    public var appDownloads: RecordMap<AppDownload>
    /// The next transaction number; IDs are numeric strings like Apple's.
    public var nextTransactionNumber: UInt64
    /// The next web order line item number.
    public var nextWebOrderLineItemNumber: UInt64
    /// Auto-renewable subscriptions by original transaction ID.
    public var subscriptions: RecordMap<SubscriptionState>
    /// Purchases waiting for approval or completion, by ID.
    public var pendingPurchases: RecordMap<PendingPurchase>
    /// Notifications to send, oldest first.
    public var events: RecordLog<SandboxEvent>
    /// Sandbox-wide settings.
    public var settings: SandboxSettings
    /// Notifications queued or sent, with their attempts; by UUID, and those still to be attempted.
    public var notifications: RecordLog<NotificationRecord>
    /// Every new or changed transaction, in order: what the device's update stream replays.
    public var updates: RecordLog<TransactionUpdate>
    /// The sequence number of the next update.
    public var nextUpdateSequence: Int
    /// Renewal date extensions by original transaction ID: when each was granted.
    public var extensions: RecordMap<[Date]>
    /// Mass extensions by "productID/requestIdentifier".
    public var massExtensions: RecordMap<MassExtendRenewalDateStatusResponse>
    /// Consumption information sent by the developer, by transaction ID.
    public var consumptionReports: RecordMap<ConsumptionRequest>
    /// Offer codes defined through the engine or the control API, by upper-case code.
    public var offerCodes: RecordMap<SandboxOfferCode>
    /// StoreKit errors simulated per API (``StoreKitTestAPI`` raw value), as `SKTestSession` sets them.
    public var simulatedErrors: RecordMap<StoreKitErrorCode>
    /// Refund requests customers made and the App Store has not decided, by transaction ID: when.
    public var refundRequests: RecordMap<Date>
    /// In-App Purchase keys registered for offer signatures, by key ID.
    public var offerKeys: RecordMap<SandboxOfferKey>
    /// Nonces of offer signatures already used, each with when: a signature is accepted once.
    public var usedOfferNonces: RecordMap<Date>

    /// One entry of the update stream.
    public struct TransactionUpdate: LoggedRecord {
        /// The entry's number, increasing across the sandbox: a device asks for the updates after the
        /// last one it saw.
        public var sequence: Int
        /// The transaction that is new or changed.
        public var transactionID: String
        /// The tester whose devices are told.
        public var testerID: String

        /// Creates an entry from its parts.
        public init(sequence: Int, transactionID: String, testerID: String) {
            self.sequence = sequence
            self.transactionID = transactionID
            self.testerID = testerID
        }

        /// Updates are kept in order only.
        public var recordKey: String? { nil }
        public var recordGroups: [RecordGroup] { [.tester(testerID)] }
    }

    /// A tester's first download of the app, which the app transaction and receipt describe.
    public struct AppDownload: Codable, Hashable, Sendable {
        /// The app transaction's ID (`appTransactionId`), the same for every download of the app by the tester.
        public var appTransactionID: String
        /// When the tester first downloaded the app.
        public var originalPurchaseDate: Date

        /// Creates a download's record from its parts.
        public init(appTransactionID: String, originalPurchaseDate: Date) {
            self.appTransactionID = appTransactionID
            self.originalPurchaseDate = originalPurchaseDate
        }
    }

    /// An empty sandbox.
    public init() {
        testers = [:]
        transactions = []
        appDownloads = [:]
        nextTransactionNumber = 2_000_000_000_000_001
        nextWebOrderLineItemNumber = 2_000_000_000_100_001
        subscriptions = [:]
        pendingPurchases = [:]
        events = []
        settings = SandboxSettings()
        notifications = []
        updates = []
        nextUpdateSequence = 1
        extensions = [:]
        massExtensions = [:]
        consumptionReports = [:]
        offerCodes = [:]
        simulatedErrors = [:]
        refundRequests = [:]
        offerKeys = [:]
        usedOfferNonces = [:]
    }

    /// Takes the next transaction ID.
    public mutating func takeTransactionID() -> String {
        defer { nextTransactionNumber += 1 }
        return String(nextTransactionNumber)
    }

    /// Takes the next web order line item ID.
    public mutating func takeWebOrderLineItemID() -> String {
        defer { nextWebOrderLineItemNumber += 1 }
        return String(nextWebOrderLineItemNumber)
    }

    /// Forgets testers, transactions, notifications and settings; numbering goes on, so IDs are
    /// never reused, and registered keys and used offer nonces stay. Stores drop the cleared rows on the
    /// next save.
    public mutating func removeAll() {
        testers.removeAll()
        transactions.removeAll()
        appDownloads.removeAll()
        subscriptions.removeAll()
        pendingPurchases.removeAll()
        events.removeAll()
        settings = SandboxSettings()
        notifications.removeAll()
        updates.removeAll()
        nextUpdateSequence = 1
        extensions.removeAll()
        massExtensions.removeAll()
        consumptionReports.removeAll()
        offerCodes.removeAll()
        simulatedErrors.removeAll()
        refundRequests.removeAll()
    }
}

extension SandboxState {
    /// Reads a saved state; parts added by later versions default to empty, so an older state file
    /// still loads.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init()
        testers = try container.decodeIfPresent(RecordMap<SandboxTester>.self, forKey: .testers) ?? [:]
        transactions = try container.decodeIfPresent(RecordLog<SandboxTransaction>.self, forKey: .transactions) ?? []
        appDownloads = try container.decodeIfPresent(RecordMap<AppDownload>.self, forKey: .appDownloads) ?? [:]
        nextTransactionNumber =
            try container.decodeIfPresent(UInt64.self, forKey: .nextTransactionNumber) ?? nextTransactionNumber
        nextWebOrderLineItemNumber =
            try container.decodeIfPresent(UInt64.self, forKey: .nextWebOrderLineItemNumber)
            ?? nextWebOrderLineItemNumber
        subscriptions = try container.decodeIfPresent(RecordMap<SubscriptionState>.self, forKey: .subscriptions) ?? [:]
        pendingPurchases =
            try container.decodeIfPresent(RecordMap<PendingPurchase>.self, forKey: .pendingPurchases) ?? [:]
        events = try container.decodeIfPresent(RecordLog<SandboxEvent>.self, forKey: .events) ?? []
        settings = try container.decodeIfPresent(SandboxSettings.self, forKey: .settings) ?? SandboxSettings()
        notifications = try container.decodeIfPresent(RecordLog<NotificationRecord>.self, forKey: .notifications) ?? []
        updates = try container.decodeIfPresent(RecordLog<TransactionUpdate>.self, forKey: .updates) ?? []
        nextUpdateSequence = try container.decodeIfPresent(Int.self, forKey: .nextUpdateSequence) ?? 1
        extensions = try container.decodeIfPresent(RecordMap<[Date]>.self, forKey: .extensions) ?? [:]
        massExtensions =
            try container.decodeIfPresent(
                RecordMap<MassExtendRenewalDateStatusResponse>.self, forKey: .massExtensions)
            ?? [:]
        consumptionReports =
            try container.decodeIfPresent(RecordMap<ConsumptionRequest>.self, forKey: .consumptionReports) ?? [:]
        offerCodes = try container.decodeIfPresent(RecordMap<SandboxOfferCode>.self, forKey: .offerCodes) ?? [:]
        simulatedErrors =
            try container.decodeIfPresent(RecordMap<StoreKitErrorCode>.self, forKey: .simulatedErrors) ?? [:]
        refundRequests = try container.decodeIfPresent(RecordMap<Date>.self, forKey: .refundRequests) ?? [:]
        offerKeys = try container.decodeIfPresent(RecordMap<SandboxOfferKey>.self, forKey: .offerKeys) ?? [:]
        usedOfferNonces = try container.decodeIfPresent(RecordMap<Date>.self, forKey: .usedOfferNonces) ?? [:]
    }
}
