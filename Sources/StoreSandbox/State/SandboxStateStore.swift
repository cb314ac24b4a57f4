public import Foundation
import Synchronization

/// Where the sandbox keeps its state.
public protocol SandboxStateStore: Sendable {
    /// The saved state, or `nil` when nothing was saved yet.
    func load() throws -> SandboxState?
    /// Saves what changed since the state's journal was last cleared (``SandboxState/changes(encoder:)``);
    /// must be atomic (a crash leaves the old or the new state, never half). The engine clears the
    /// journal once this returns.
    func save(_ state: SandboxState) throws
}

/// Keeps the state in memory: for tests, and for `--data` left empty.
///
/// It keeps rows as the SQLite store does (each record as JSON, written only when it changed), so a
/// test that restarts an engine on the same memory store reads back exactly what was written.
public final class MemoryStateStore: SandboxStateStore {
    private struct Rows {
        var scalars: Data?
        var tables: [String: [SandboxStateChanges.RowKey: Data]] = [:]
        let coding = SandboxRowCoding()
    }

    private let rows = Mutex(Rows())

    /// A store holding `state` (empty when `nil`).
    public init(_ state: SandboxState? = nil) {
        guard var state else { return }
        state.markAllChanged()
        try? save(state)
    }

    public func load() throws -> SandboxState? {
        let (scalars, tables, decoder) = rows.withLock { ($0.scalars, $0.tables, $0.coding.decoder) }
        guard let scalars else { return nil }
        return try SandboxState(restoringScalars: scalars, decoder: decoder) { table, row in
            for (key, body) in tables[table] ?? [:] { try row(key, body) }
        }
    }

    public func save(_ state: SandboxState) throws {
        try rows.withLock { rows in
            let changes = try state.changes(encoder: rows.coding.encoder)
            for table in changes.tables {
                if table.dropsAll { rows.tables[table.name] = [:] }
                for row in table.rows { rows.tables[table.name, default: [:]][row.key] = row.body }
            }
            rows.scalars = changes.scalars
        }
    }
}

/// The JSON settings of the stores' rows: dates as seconds since 2001, exactly as `Date` holds them.
struct SandboxRowCoding {
    let encoder = JSONEncoder()
    let decoder = JSONDecoder()
}

/// Keeps the state in a JSON file, replaced whole and atomically on every save.
///
/// How sandboxes kept their state before ``SQLiteStateStore``; that store imports such a file once.
/// Every save rewrites the whole file, so it slows down as the history grows.
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

/// The saved state cannot be read (a corrupt file or row) or written (a full disk, a locked database).
public struct SandboxStateError: Error, CustomStringConvertible {
    /// The file that holds the state.
    public let url: URL
    /// What went wrong.
    public let reason: String
    /// Whether writing (rather than reading) failed.
    public let isWrite: Bool
    /// Whether trying again later may succeed (the database was busy or could not be reached).
    public let isRetryable: Bool

    /// Creates an error from its parts; by default a failed read that trying again will not fix.
    public init(url: URL, reason: String, isWrite: Bool = false, isRetryable: Bool = false) {
        self.url = url
        self.reason = reason
        self.isWrite = isWrite
        self.isRetryable = isRetryable
    }

    public var description: String {
        "the sandbox state in \(url.path) cannot be \(isWrite ? "written" : "read"): \(reason)"
    }
}

