import Foundation
import KakinSQLite
import Logging
import SQLKit
import Synchronization
import Testing

@testable import KakinServer

@Suite("SQLite log flushes beside the writer")
struct SQLiteLogSyncerTests {
    struct DiskFailed: Error {}

    /// A flush the test holds: each call reports that it began, then waits until the gate is open,
    /// then fails when told to.
    final class FlushGate: Sendable {
        private struct State {
            var open = true
            var failing = false
            var calls = 0
        }
        private let state = Mutex(State())
        private let condition = NSCondition()
        let began: AsyncStream<Int>
        private let beganContinuation: AsyncStream<Int>.Continuation

        init() {
            (began, beganContinuation) = AsyncStream.makeStream(of: Int.self)
        }

        var calls: Int { state.withLock { $0.calls } }

        func close() { state.withLock { $0.open = false } }

        func fail() { state.withLock { $0.failing = true } }

        func open() {
            condition.lock()
            state.withLock { $0.open = true }
            condition.broadcast()
            condition.unlock()
        }

        /// The engine's flush: runs on the syncer's thread, which it may block.
        func flush() throws {
            let call = state.withLock { state -> Int in
                state.calls += 1
                return state.calls
            }
            beganContinuation.yield(call)
            condition.lock()
            while !state.withLock({ $0.open }) { condition.wait() }
            condition.unlock()
            if state.withLock({ $0.failing }) { throw DiskFailed() }
        }
    }

    /// How many calls were answered.
    final class Answers: Sendable {
        let count = Atomic<Int>(0)
    }

    /// A file database with its engine, whose flushes go through `gate`.
    func withEngine(
        _ gate: FlushGate, _ body: (SQLiteLedgerEngine, String) async throws -> Void
    ) async throws {
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("kakin-syncer-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("ledger.sqlite").path
        let engine = try SQLiteLedgerEngine(
            path: path, busyTimeoutMilliseconds: 5_000, logger: Logger(label: "test"), flush: { try gate.flush() })
        do {
            try await body(engine, path)
        } catch {
            gate.open()
            await engine.close()
            throw error
        }
        gate.open()
        await engine.close()
    }

    /// The rows of `scratch` as another connection of this process sees them, without the engine.
    func committedRows(_ path: String) throws -> Int64 {
        let connection = try SQLiteDirectConnection(path: path)
        let rows = try connection.query("SELECT count(*) FROM scratch").rows
        guard case .integer(let count)? = rows.first?.first else { return -1 }
        return count
    }

    /// Creates `scratch` (its flush passes), closes the gate, and starts writing row `id`: when
    /// this returns, that write's commit is made and its flush has begun, and waits at the gate.
    func heldWrite(
        _ engine: SQLiteLedgerEngine, _ gate: FlushGate, id: Int, answered: Answers = Answers()
    ) async throws -> Task<Void, any Error> {
        try await engine.write { db in try await db.raw("CREATE TABLE scratch (id INTEGER PRIMARY KEY)").run() }
        var began = gate.began.makeAsyncIterator()
        _ = await began.next()

        gate.close()
        let write = Task {
            try await engine.write { db in try await db.raw("INSERT INTO scratch (id) VALUES (\(bind: id))").run() }
            answered.count.add(1, ordering: .sequentiallyConsistent)
        }
        #expect(await began.next() == 2)
        return write
    }

    @Test("a write is answered only after the flush of its commit, and a read that saw the commit waits for it too")
    func answersWaitForTheFlush() async throws {
        let gate = FlushGate()
        try await withEngine(gate) { engine, path in
            let answered = Answers()
            let write = try await heldWrite(engine, gate, id: 1, answered: answered)
            #expect(try committedRows(path) == 1)
            let read = Task {
                let count = try await engine.read { db in
                    try await db.raw("SELECT count(*) AS n FROM scratch").first()?.decode(column: "n", as: Int.self)
                }
                answered.count.add(1, ordering: .sequentiallyConsistent)
                return count
            }
            for _ in 0..<200 { await Task.yield() }
            #expect(answered.count.load(ordering: .sequentiallyConsistent) == 0, "nothing is answered before the flush")

            gate.open()
            try await write.value
            #expect(try await read.value == 1)
            #expect(answered.count.load(ordering: .sequentiallyConsistent) == 2)
        }
    }

    @Test("commits made while a flush runs share the next one, and every write is answered")
    func commitsShareFlushes() async throws {
        let gate = FlushGate()
        try await withEngine(gate) { engine, path in
            let first = try await heldWrite(engine, gate, id: 0)
            // While that flush waits, the writer goes on committing.
            let rest = Task {
                try await concurrently(200) { index in
                    try await engine.write { db in
                        try await db.raw("INSERT INTO scratch (id) VALUES (\(bind: index + 1))").run()
                    }
                }
            }
            // Every write committed, and the writer idle: each commit was handed to the syncer.
            while try committedRows(path) < 201 || engine.isWriting { await Task.yield() }
            #expect(gate.calls == 2, "no other flush begins while one runs")

            gate.open()
            try await first.value
            _ = try await rest.value
            // However the writer grouped the 200, one flush covered everything committed meanwhile.
            #expect(gate.calls == 3)
            let count = try await engine.read { db in
                try await db.raw("SELECT count(*) AS n FROM scratch").first()?.decode(column: "n", as: Int.self)
            }
            #expect(count == 201)
        }
    }

    @Test("a failed flush fails its writes, and from then on every write and read, with a retryable error")
    func failedFlushStopsAnswers() async throws {
        let gate = FlushGate()
        try await withEngine(gate) { engine, _ in
            try await engine.write { db in try await db.raw("CREATE TABLE scratch (id INTEGER PRIMARY KEY)").run() }
            gate.fail()
            for attempt in 1...2 {
                let error = await #expect(throws: LedgerStoreError.self) {
                    try await engine.write { db in
                        try await db.raw("INSERT INTO scratch (id) VALUES (\(bind: attempt))").run()
                    }
                }
                #expect(error?.code == .unavailable)
                #expect(error?.description.contains("could not be flushed") == true)
            }
            let error = await #expect(throws: LedgerStoreError.self) {
                try await engine.read { db in try await db.raw("SELECT id FROM scratch").all().count }
            }
            #expect(error?.code == .unavailable)
            // Only the first failure was a flush: later commits are refused without one.
            #expect(gate.calls == 2)
        }
    }

    @Test("an engine closed twice returns both times, after answering what it had")
    func closingTwice() async throws {
        let gate = FlushGate()
        try await withEngine(gate) { engine, _ in
            try await engine.write { db in try await db.raw("CREATE TABLE scratch (id INTEGER PRIMARY KEY)").run() }
            await engine.close()
            await engine.close()
            await #expect(throws: LedgerStoreError.self) {
                try await engine.write { db in try await db.raw("INSERT INTO scratch (id) VALUES (1)").run() }
            }
        }
    }

    @Test("the log file is flushed for real, and a missing log is a storage error")
    func logFileFlushes() throws {
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("kakin-log-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let database = directory.appendingPathComponent("ledger.sqlite").path

        let missing = SQLiteLogFile(databasePath: database)
        let error = try #require(throws: LedgerStoreError.self) { try missing.flush() }
        #expect(error.code == .unavailable)
        #expect(error.description.contains("ledger.sqlite-wal"))

        #expect(FileManager.default.createFile(atPath: database + "-wal", contents: Data(repeating: 7, count: 4_096)))
        let log = SQLiteLogFile(databasePath: database)
        try log.flush()
        try log.flush()
    }
}
