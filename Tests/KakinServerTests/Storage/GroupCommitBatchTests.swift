import Logging
import NIOCore
import NIOPosix
import SQLKit
import Synchronization
import Testing

@testable import KakinServer
@testable import KakinLedger

/// The writer's batch: the jobs it decides are answered without a transaction of the writer's
/// (the batch's statements commit on their own); the jobs it leaves, or all of them when it fails,
/// run their bodies in the group's transaction.
@Suite("Group commit: the batch before the group's transaction")
struct GroupCommitBatchTests {
    /// A writer whose batch doubles even items times five, leaves odd ones to their bodies (which
    /// answer the item times a hundred), and fails on 99.
    private func writer(_ connection: RecordingConnection, commits: Counter = Counter()) -> GroupCommitWriter {
        GroupCommitWriter(
            .init(
                begin: "BEGIN", closedError: { LedgerStoreError(.unavailable, "closed") },
                afterCommit: { commits.add() },
                batch: { items, _ in
                    let numbers = items.compactMap { $0 as? Int }
                    if numbers.contains(99) { throw LedgerStoreError(.unavailable, "the batch failed") }
                    connection.log("batch \(numbers.count)")
                    return numbers.map { $0 % 2 == 0 ? $0 * 10 : nil }
                })
        ) { body in try await body(connection) }
    }

    private func write(_ writer: GroupCommitWriter, _ item: Int) async throws -> Int {
        try await writer.write(batchItem: item) { _ in item * 100 }
    }

    @Test("a group the batch decides whole runs no BEGIN or COMMIT, and counts as committed")
    func batchOnly() async throws {
        let connection = RecordingConnection()
        let commits = Counter()
        let writer = writer(connection, commits: commits)
        let results = try await concurrently(40) { index in (index * 2, try await write(writer, index * 2)) }
        for (item, result) in results { #expect(result == item * 10) }
        #expect(!connection.statements.contains("BEGIN") && !connection.statements.contains("COMMIT"))
        #expect(commits.count >= 1)
        await writer.close()
    }

    @Test("the jobs the batch leaves run their bodies in the group's transaction")
    func batchAndBodies() async throws {
        let connection = RecordingConnection()
        let writer = writer(connection)
        let results = try await concurrently(60) { index in (index, try await write(writer, index)) }
        for (item, result) in results { #expect(result == (item % 2 == 0 ? item * 10 : item * 100)) }
        let statements = connection.statements
        #expect(statements.filter { $0 == "BEGIN" }.count == statements.filter { $0 == "COMMIT" }.count)
        #expect(statements.contains("BEGIN"), "the odd items ran in a transaction")
        await writer.close()
    }

    @Test("a batch that fails decides nothing: every job of its group runs its body")
    func failedBatch() async throws {
        let connection = RecordingConnection()
        let writer = writer(connection)
        #expect(try await write(writer, 99) == 9900)
        #expect(connection.statements == ["BEGIN", "COMMIT"])
        await writer.close()
    }
}

/// Counts the writer's commits.
private final class Counter: Sendable {
    private let value = Atomic<Int>(0)
    var count: Int { value.load(ordering: .relaxed) }
    func add() { value.add(1, ordering: .relaxed) }
}

/// A writer's connection that records what the writer runs on it.
private final class RecordingConnection: GroupCommitConnection, Sendable {
    private let recorded = Mutex<[String]>([])
    var statements: [String] { recorded.withLock { $0 } }
    var database: any SQLDatabase { NoDatabase() }
    var isBroken: Bool { false }

    func log(_ line: String) { recorded.withLock { $0.append(line) } }
    func execute(_ sql: String) async throws { log(sql) }
}

/// A database the jobs of these tests never use.
private struct NoDatabase: SQLDatabase {
    var logger: Logger { Logger(label: "none") }
    var eventLoop: any EventLoop { MultiThreadedEventLoopGroup.singleton.any() }
    var dialect: any SQLDialect { NoDialect() }

    func execute(
        sql query: any SQLExpression, _ onRow: @escaping @Sendable (any SQLRow) -> Void
    ) -> EventLoopFuture<Void> {
        eventLoop.makeFailedFuture(LedgerStoreError(.inconsistentState, "no database here"))
    }
}

private struct NoDialect: SQLDialect {
    var name: String { "none" }
    var identifierQuote: any SQLExpression { SQLRaw("\"") }
    var literalStringQuote: any SQLExpression { SQLRaw("'") }
    var supportsAutoIncrement: Bool { false }
    var autoIncrementClause: any SQLExpression { SQLRaw("") }
    func bindPlaceholder(at position: Int) -> any SQLExpression { SQLRaw("?") }
    func literalBoolean(_ value: Bool) -> any SQLExpression { SQLRaw(value ? "1" : "0") }
}
