public import AppStoreModels
public import Foundation
import Synchronization

/// Everything the sandbox remembers: testers, transactions and the counters that number them.
///
/// A plain `Codable` value, so it is saved whole and atomically after each change (a sandbox holds
/// test data, not millions of rows) and read back at start.
public struct SandboxState: Codable, Hashable, Sendable {
    /// Testers by ID.
    public var testers: [String: SandboxTester]
    /// Every transaction, in the order they happened.
    public var transactions: [SandboxTransaction]
    /// Each tester's app download: its `appTransactionId` and original purchase date.
    public var appDownloads: [String: AppDownload]
    /// The next transaction number; IDs are numeric strings like Apple's.
    public var nextTransactionNumber: UInt64
    /// The next web order line item number.
    public var nextWebOrderLineItemNumber: UInt64
    /// Auto-renewable subscriptions by original transaction ID.
    public var subscriptions: [String: SubscriptionState]
    /// Purchases waiting for approval or completion, by ID.
    public var pendingPurchases: [String: PendingPurchase]
    /// Notifications to send, oldest first.
    public var events: [SandboxEvent]
    /// Sandbox-wide settings.
    public var settings: SandboxSettings
    /// Notifications queued or sent, with their attempts.
    public var notifications: [NotificationRecord]
    /// Every new or changed transaction, in order: what the device's update stream replays.
    public var updates: [TransactionUpdate]
    /// The sequence number of the next update.
    public var nextUpdateSequence: Int
    /// Renewal date extensions by original transaction ID: when each was granted.
    public var extensions: [String: [Date]]
    /// Mass extensions by "productID/requestIdentifier".
    public var massExtensions: [String: MassExtendRenewalDateStatusResponse]
    /// Consumption information sent by the developer, by transaction ID.
    public var consumptionReports: [String: ConsumptionRequest]

    /// One entry of the update stream.
    public struct TransactionUpdate: Codable, Hashable, Sendable {
        public var sequence: Int
        public var transactionID: String
        public var testerID: String

        public init(sequence: Int, transactionID: String, testerID: String) {
            self.sequence = sequence
            self.transactionID = transactionID
            self.testerID = testerID
        }
    }

    /// A tester's first download of the app, which the app transaction and receipt describe.
    public struct AppDownload: Codable, Hashable, Sendable {
        public var appTransactionID: String
        public var originalPurchaseDate: Date

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
}

/// Where the sandbox keeps its state.
public protocol SandboxStateStore: Sendable {
    /// The saved state, or `nil` when nothing was saved yet.
    func load() throws -> SandboxState?
    /// Saves the state; must be atomic (a crash leaves the old or the new state, never half).
    func save(_ state: SandboxState) throws
}

/// Keeps the state in memory: for tests, and for `--data` left empty.
public final class MemoryStateStore: SandboxStateStore {
    private let state: Mutex<SandboxState?>

    public init(_ state: SandboxState? = nil) {
        self.state = Mutex(state)
    }

    public func load() throws -> SandboxState? { state.withLock { $0 } }
    public func save(_ newState: SandboxState) throws { state.withLock { $0 = newState } }
}

/// Keeps the state in a JSON file, replaced atomically on every save, so it survives a restart.
public struct FileStateStore: SandboxStateStore {
    /// The state file.
    public let url: URL

    /// Uses `state.json` in `directory` (created when needed).
    public init(directory: URL) {
        url = directory.appendingPathComponent("state.json")
    }

    public func load() throws -> SandboxState? {
        guard FileManager.default.fileExists(atPath: url.path) else { return nil }
        let data = try Data(contentsOf: url)
        do {
            return try Self.decoder.decode(SandboxState.self, from: data)
        } catch {
            throw SandboxStateError(url: url, reason: "\(error)")
        }
    }

    public func save(_ state: SandboxState) throws {
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        try Self.encoder.encode(state).write(to: url, options: .atomic)
    }

    private static var encoder: JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        encoder.dateEncodingStrategy = .millisecondsSince1970
        return encoder
    }

    private static var decoder: JSONDecoder {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .millisecondsSince1970
        return decoder
    }
}

/// The state file exists but cannot be read as a sandbox state.
public struct SandboxStateError: Error, CustomStringConvertible {
    public let url: URL
    public let reason: String
    public var description: String { "the sandbox state in \(url.path) cannot be read: \(reason)" }
}

extension SandboxState {
    /// Reads a saved state; parts added by later versions default to empty, so an older state file
    /// still loads.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init()
        testers = try container.decodeIfPresent([String: SandboxTester].self, forKey: .testers) ?? [:]
        transactions = try container.decodeIfPresent([SandboxTransaction].self, forKey: .transactions) ?? []
        appDownloads = try container.decodeIfPresent([String: AppDownload].self, forKey: .appDownloads) ?? [:]
        nextTransactionNumber =
            try container.decodeIfPresent(UInt64.self, forKey: .nextTransactionNumber) ?? nextTransactionNumber
        nextWebOrderLineItemNumber =
            try container.decodeIfPresent(UInt64.self, forKey: .nextWebOrderLineItemNumber)
            ?? nextWebOrderLineItemNumber
        subscriptions = try container.decodeIfPresent([String: SubscriptionState].self, forKey: .subscriptions) ?? [:]
        pendingPurchases =
            try container.decodeIfPresent([String: PendingPurchase].self, forKey: .pendingPurchases) ?? [:]
        events = try container.decodeIfPresent([SandboxEvent].self, forKey: .events) ?? []
        settings = try container.decodeIfPresent(SandboxSettings.self, forKey: .settings) ?? SandboxSettings()
        notifications = try container.decodeIfPresent([NotificationRecord].self, forKey: .notifications) ?? []
        updates = try container.decodeIfPresent([TransactionUpdate].self, forKey: .updates) ?? []
        nextUpdateSequence = try container.decodeIfPresent(Int.self, forKey: .nextUpdateSequence) ?? 1
        extensions = try container.decodeIfPresent([String: [Date]].self, forKey: .extensions) ?? [:]
        massExtensions =
            try container.decodeIfPresent([String: MassExtendRenewalDateStatusResponse].self, forKey: .massExtensions)
            ?? [:]
        consumptionReports =
            try container.decodeIfPresent([String: ConsumptionRequest].self, forKey: .consumptionReports) ?? [:]
    }
}
