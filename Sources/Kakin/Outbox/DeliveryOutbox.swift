public import Foundation

#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The durable list of transactions bought but not yet acknowledged by the server: one per
/// storage directory, shared by every app user, manager and process that uses the directory.
///
/// A transaction enters before anything is sent and leaves only after the server acknowledged it
/// and the store finished it. Every change is a read-modify-write of `outbox.json` under an
/// exclusive lock on `outbox.lock`, and the file is replaced atomically: two managers (for Alice
/// and for Bob, in one process or in two) never overwrite each other's entries, and a crash at
/// any moment leaves the list as it was before or after the change, never half-written. On the
/// next start, whatever is still listed is delivered again, and the server, keyed by transaction
/// ID, records it once. This is what makes lost orders (paid but never granted) and double grants
/// impossible.
public actor DeliveryOutbox {
    /// One transaction waiting for the server.
    public struct Entry: Codable, Hashable, Sendable {
        /// The transaction to deliver.
        public var transaction: StoreTransaction
        /// The app user the purchase is delivered for.
        public var appUserID: String
        /// How many deliveries of it have failed so far.
        public var attempts: Int
        /// When it is due: the time it was queued, then the retry time after each failure.
        public var nextAttempt: Date
        /// What the last failed delivery reported; `nil` before any failure.
        public var lastError: String?
        /// Set when the server refused it for good (a verification failure, a purchase another
        /// customer owns): kept, not retried automatically, reported to the app. A restore that
        /// finds the transaction again tries it once more.
        public var rejected: Bool
        /// Queued by a restore: reported as restored, not purchased, once delivered.
        public var restored: Bool
        /// Queued by a purchase this device just made, which the store answered with a new
        /// transaction carrying the buyer's own app account token: it is delivered without the
        /// device's app transaction, which only transactions the app did not just buy need (see
        /// ``KakinServerClient/deliver(_:appUserID:signedAppTransaction:authorizedAs:)``).
        public var isNewPurchase: Bool

        /// Creates an entry, by default with no failed attempts, due at `nextAttempt`.
        public init(
            transaction: StoreTransaction, appUserID: String, attempts: Int = 0, nextAttempt: Date,
            lastError: String? = nil, rejected: Bool = false, restored: Bool = false, isNewPurchase: Bool = false
        ) {
            self.transaction = transaction
            self.appUserID = appUserID
            self.attempts = attempts
            self.nextAttempt = nextAttempt
            self.lastError = lastError
            self.rejected = rejected
            self.restored = restored
            self.isNewPurchase = isNewPurchase
        }

        /// Decodes an entry; files written before `restored` and `isNewPurchase` existed read as
        /// neither (so they are delivered with the device's app transaction).
        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            transaction = try container.decode(StoreTransaction.self, forKey: .transaction)
            appUserID = try container.decode(String.self, forKey: .appUserID)
            attempts = try container.decode(Int.self, forKey: .attempts)
            nextAttempt = try container.decode(Date.self, forKey: .nextAttempt)
            lastError = try container.decodeIfPresent(String.self, forKey: .lastError)
            rejected = try container.decode(Bool.self, forKey: .rejected)
            restored = try container.decodeIfPresent(Bool.self, forKey: .restored) ?? false
            isNewPurchase = try container.decodeIfPresent(Bool.self, forKey: .isNewPurchase) ?? false
        }
    }

    /// The file's form: entries grouped by app user, which user each app account token stands
    /// for, and which identified user each anonymous user of the device became.
    private struct Document: Codable, Equatable {
        var version = 2
        var users: [String: [Entry]] = [:]
        /// App user IDs by app account token (lower-case UUID).
        var accounts: [String: String] = [:]
        /// The identified user each anonymous user became at a log-in on this device.
        var successors: [String: String]?

        init(entries: [Entry], accounts: [String: String] = [:]) {
            self.entries = entries
            self.accounts = accounts
        }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            version = try container.decode(Int.self, forKey: .version)
            users = try container.decode([String: [Entry]].self, forKey: .users)
            accounts = try container.decodeIfPresent([String: String].self, forKey: .accounts) ?? [:]
            successors = try container.decodeIfPresent([String: String].self, forKey: .successors)
        }

        var entries: [Entry] {
            get {
                users.values.flatMap { $0 }.sorted {
                    ($0.nextAttempt, $0.transaction.id) < ($1.nextAttempt, $1.transaction.id)
                }
            }
            set {
                users = [:]
                for entry in newValue { users[entry.appUserID, default: []].append(entry) }
            }
        }
    }

    private let url: URL
    private let lockPath: String

    /// Opens (or creates) the outbox in `directory`.
    public init(directory: URL) throws {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        url = directory.appendingPathComponent("outbox.json")
        lockPath = directory.appendingPathComponent("outbox.lock").path
    }

    /// Adds a transaction unless it is already listed. Durable when it returns.
    ///
    /// A transaction already listed keeps its entry, with two exceptions: a restore (`restored`)
    /// of one the server refused for good queues it again, for `appUserID` and due now (the
    /// customer may now be signed in to the Apple Account that bought it); and a purchase that
    /// made a new transaction (`isNewPurchase`) marks an entry the update stream queued first.
    ///
    /// - Returns: whether the transaction was added or queued again.
    @discardableResult
    public func enqueue(
        _ transaction: StoreTransaction, appUserID: String, now: Date, restored: Bool = false,
        isNewPurchase: Bool = false
    ) throws -> Bool {
        try update { entries in
            guard let index = entries.firstIndex(where: { $0.transaction.id == transaction.id }) else {
                entries.append(
                    Entry(
                        transaction: transaction, appUserID: appUserID, nextAttempt: now, restored: restored,
                        isNewPurchase: isNewPurchase))
                return true
            }
            if isNewPurchase { entries[index].isNewPurchase = true }
            guard restored, entries[index].rejected else { return false }
            entries[index].rejected = false
            entries[index].restored = true
            entries[index].appUserID = appUserID
            entries[index].nextAttempt = now
            return true
        }
    }

    /// Entries due at `now`, soonest first.
    public func due(at now: Date) -> [Entry] {
        ((try? read()) ?? []).filter { !$0.rejected && $0.nextAttempt <= now }
    }

    /// Everything listed, as the file says now.
    public var all: [Entry] { (try? read()) ?? [] }

    /// The entries of one app user.
    public func entries(of appUserID: String) -> [Entry] { all.filter { $0.appUserID == appUserID } }

    /// When the next retryable entry after `date` is due, if any.
    public func nextAttempt(after date: Date) -> Date? {
        all.filter { !$0.rejected && $0.nextAttempt > date }.map(\.nextAttempt).min()
    }

    /// Removes an acknowledged and finished transaction.
    public func remove(_ transactionID: String) throws {
        try update { entries in entries.removeAll { $0.transaction.id == transactionID } }
    }

    /// Records a failed attempt and when to try again (or that the server refused it for good).
    public func failed(_ transactionID: String, error: String, retryAt: Date?, now: Date) throws {
        try update { entries in
            guard let index = entries.firstIndex(where: { $0.transaction.id == transactionID }) else { return }
            entries[index].attempts += 1
            entries[index].lastError = error
            if let retryAt {
                entries[index].nextAttempt = retryAt
            } else {
                entries[index].rejected = true
            }
        }
    }

    // MARK: - App account tokens

    /// Remembers that `token` stands for `appUserID`, so a transaction the store replays later
    /// (unfinished at launch, an approval, a renewal) is delivered for the user who bought it.
    public func register(token: UUID, for appUserID: String) throws {
        try updateDocument { $0.accounts[token.uuidString.lowercased()] = appUserID }
    }

    /// The app user a transaction's app account token stands for, if this device knows it.
    public func appUserID(forToken token: String?) -> String? {
        guard let token = token?.lowercased() else { return nil }
        return try? locked(LOCK_SH) { try readFile().accounts[token] }
    }

    // MARK: - Log-ins

    /// Remembers that the anonymous user `anonymousID` became the identified user `appUserID` at
    /// a log-in on this device, so that what is still queued for the anonymous user is delivered
    /// with the identified user's customer token and reported to that user's managers, after a
    /// relaunch too.
    public func recordSuccession(of anonymousID: String, by appUserID: String) throws {
        try updateDocument { document in
            var successors = document.successors ?? [:]
            successors[anonymousID] = appUserID
            document.successors = successors
        }
    }

    /// The identified user each anonymous user of this device became, by anonymous ID.
    public func successions() -> [String: String] {
        (try? locked(LOCK_SH) { try readFile().successors }) ?? [:]
    }

    // MARK: - The file

    /// Reads, changes and writes the list under the exclusive lock.
    private func update<R>(_ change: (inout [Entry]) throws -> R) throws -> R {
        try updateDocument { document in try change(&document.entries) }
    }

    /// Reads, changes and writes the whole file under the exclusive lock; written only if changed.
    private func updateDocument<R>(_ change: (inout Document) throws -> R) throws -> R {
        try locked(LOCK_EX) {
            var document = try readFile()
            let before = document
            let result = try change(&document)
            if document != before {
                let encoder = JSONEncoder()
                encoder.outputFormatting = [.sortedKeys]
                try encoder.encode(document).write(to: url, options: .atomic)
            }
            return result
        }
    }

    private func read() throws -> [Entry] {
        try locked(LOCK_SH) { try readFile().entries }
    }

    private func readFile() throws -> Document {
        guard let data = try? Data(contentsOf: url), !data.isEmpty else { return Document(entries: []) }
        let decoder = JSONDecoder()
        if let document = try? decoder.decode(Document.self, from: data) { return document }
        // The first form of the file: a plain list.
        if let list = try? decoder.decode([Entry].self, from: data) { return Document(entries: list) }
        throw KakinError(.storage, "\(url.path) is not an outbox file", isRetryable: false)
    }

    private func locked<R>(_ operation: Int32, _ body: () throws -> R) throws -> R {
        let descriptor = open(lockPath, O_CREAT | O_RDWR, 0o600)
        guard descriptor >= 0 else {
            throw KakinError(.storage, "cannot open \(lockPath): errno \(errno)", isRetryable: true)
        }
        defer { close(descriptor) }
        while flock(descriptor, operation) != 0 {
            guard errno == EINTR else {
                throw KakinError(.storage, "cannot lock \(lockPath): errno \(errno)", isRetryable: true)
            }
        }
        defer { flock(descriptor, LOCK_UN) }
        return try body()
    }
}
