import Foundation
import NIOCore
import NIOPosix
import SQLKit
import Testing

@testable import KakinServer
@testable import KakinLedger

@Suite("SQLite group commit and readers")
struct SQLiteGroupCommitTests {
    struct Refused: Error {}

    @Test("a job that fails after writing leaves nothing, and the jobs committed with it keep everything")
    func failedJobsAreUndoneAlone() async throws {
        try await withLedgerStore(.file) { store in
            try await store.writing { db in
                try await db.raw("CREATE TABLE scratch (id INTEGER PRIMARY KEY, note TEXT NOT NULL)").run()
            }
            // 400 writes at once, so that they are committed in groups; every third one writes
            // two rows and then fails.
            let outcomes = try await concurrently(400) { index -> (Int, Bool) in
                do {
                    try await store.writing { db in
                        try await db.raw("INSERT INTO scratch (id, note) VALUES (\(bind: index), 'first')").run()
                        try await db.raw("INSERT INTO scratch (id, note) VALUES (\(bind: 1_000 + index), 'second')")
                            .run()
                        if index % 3 == 0 { throw Refused() }
                    }
                    return (index, true)
                } catch is Refused {
                    return (index, false)
                }
            }
            let stored = try await store.reading { db in
                try await db.raw("SELECT id FROM scratch").all().map { try $0.decode(column: "id", as: Int.self) }
            }
            let kept = (0..<400).filter { $0 % 3 != 0 }
            #expect(outcomes.sorted { $0.0 < $1.0 }.map(\.1) == (0..<400).map { $0 % 3 != 0 })
            #expect(Set(stored) == Set(kept + kept.map { 1_000 + $0 }))
        }
    }

    /// Runs the jobs of a task on one event loop, as the server's tasks run.
    final class EventLoopTaskExecutor: TaskExecutor {
        let loop: any EventLoop
        init(_ loop: any EventLoop) { self.loop = loop }
        func enqueue(_ job: consuming ExecutorJob) {
            let job = UnownedJob(job)
            loop.execute { job.runSynchronously(on: self.asUnownedTaskExecutor()) }
        }
    }

    @Test("writes sent from the event loops get their answers there, each exactly once, failures included")
    func writesFromEventLoopsAreAnsweredOnTheirLoops() async throws {
        try await withLedgerStore(.file) { store in
            try await store.writing { db in
                try await db.raw("CREATE TABLE scratch (id INTEGER PRIMARY KEY)").run()
            }
            let loops = Array(MultiThreadedEventLoopGroup.singleton.makeIterator())
            // Half the writes from tasks that run on an event loop, half from the shared pool;
            // every fifth one fails.
            let outcomes = try await concurrently(300) { index -> (Int, Bool, Bool) in
                let write: @Sendable () async throws -> Bool = {
                    do {
                        try await store.writing { db in
                            try await db.raw("INSERT INTO scratch (id) VALUES (\(bind: index))").run()
                            if index % 5 == 0 { throw Refused() }
                        }
                        return true
                    } catch is Refused {
                        return false
                    }
                }
                guard index % 2 == 0 else { return (index, try await write(), true) }
                let loop = loops[index % loops.count]
                return try await Task(executorPreference: EventLoopTaskExecutor(loop)) {
                    let wrote = try await write()
                    return (index, wrote, loop.inEventLoop)
                }.value
            }
            #expect(outcomes.count == 300)
            #expect(outcomes.allSatisfy { $0.2 }, "a task that runs on a loop is back on it")
            #expect(outcomes.sorted { $0.0 < $1.0 }.map(\.1) == (0..<300).map { $0 % 5 != 0 })
            let stored = try await store.reading { db in
                try await db.raw("SELECT id FROM scratch").all().map { try $0.decode(column: "id", as: Int.self) }
            }
            #expect(Set(stored) == Set((0..<300).filter { $0 % 5 != 0 }))
        }
    }

    @Test("more reads at once than there may be reader connections wait for one, and all of them answer")
    func readersAreBounded() async throws {
        try await withLedgerStore(.file) { store in
            let engine = try #require(store.engine)
            try await store.writing { db in
                try await db.raw("CREATE TABLE scratch (id INTEGER PRIMARY KEY)").run()
                try await db.raw("INSERT INTO scratch (id) VALUES (7)").run()
            }
            // Each read keeps its connection across suspensions, as a read does while its task
            // waits to run again.
            let reads = SQLiteLedgerEngine.maxReaders * 4
            let answers = try await concurrently(reads) { _ in
                try await store.reading { db -> Int in
                    await Task.yield()
                    let id = try await db.raw("SELECT id FROM scratch").first()?.decode(column: "id", as: Int.self)
                    await Task.yield()
                    return id ?? 0
                }
            }
            #expect(answers == Array(repeating: 7, count: reads))
            #expect(engine.openReaders > 0)
            #expect(engine.openReaders <= SQLiteLedgerEngine.maxReaders)
        }
    }
}
