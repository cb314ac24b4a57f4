public import Foundation

/// The durable list of transactions bought but not yet acknowledged by the server.
///
/// A transaction enters before anything is sent and leaves only after the server acknowledged it
/// and the store finished it. The file is replaced atomically on every change, so a crash at any
/// moment leaves the list as it was before or after the change, never half-written: on the next
/// start, whatever is still listed is delivered again, and the server, keyed by transaction ID,
/// records it once. This is what makes lost orders (paid but never granted) and double grants
/// impossible.
public actor DeliveryOutbox {
    /// One transaction waiting for the server.
    public struct Entry: Codable, Hashable, Sendable {
        public var transaction: StoreTransaction
        public var appUserID: String
        public var attempts: Int
        public var nextAttempt: Date
        public var lastError: String?
        /// Set when the server refused it for good (a verification failure): kept, not retried
        /// automatically, reported to the app.
        public var rejected: Bool
    }

    private let url: URL
    private var entries: [Entry]

    /// Opens (or creates) the outbox in `directory`.
    public init(directory: URL) throws {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        url = directory.appendingPathComponent("outbox.json")
        if let data = try? Data(contentsOf: url) {
            entries = (try? JSONDecoder().decode([Entry].self, from: data)) ?? []
        } else {
            entries = []
        }
    }

    /// Adds a transaction unless it is already listed. Durable when it returns.
    @discardableResult
    public func enqueue(_ transaction: StoreTransaction, appUserID: String, now: Date) throws -> Bool {
        guard !entries.contains(where: { $0.transaction.id == transaction.id }) else { return false }
        entries.append(
            Entry(
                transaction: transaction, appUserID: appUserID, attempts: 0, nextAttempt: now, lastError: nil,
                rejected: false))
        try persist()
        return true
    }

    /// Entries due at `now`, oldest first.
    public func due(at now: Date) -> [Entry] {
        entries.filter { !$0.rejected && $0.nextAttempt <= now }
    }

    /// Everything listed.
    public var all: [Entry] { entries }

    /// Removes an acknowledged and finished transaction.
    public func remove(_ transactionID: String) throws {
        entries.removeAll { $0.transaction.id == transactionID }
        try persist()
    }

    /// Records a failed attempt and when to try again (or that the server refused it for good).
    public func failed(_ transactionID: String, error: String, retryAt: Date?, now: Date) throws {
        guard let index = entries.firstIndex(where: { $0.transaction.id == transactionID }) else { return }
        entries[index].attempts += 1
        entries[index].lastError = error
        if let retryAt {
            entries[index].nextAttempt = retryAt
        } else {
            entries[index].rejected = true
        }
        try persist()
    }

    private func persist() throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        try encoder.encode(entries).write(to: url, options: .atomic)
    }
}
