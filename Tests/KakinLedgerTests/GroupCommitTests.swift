import Synchronization
import KakinTestSupport
import Testing

@testable import KakinLedger

/// The group commit on an engine that records what it was asked: which jobs were committed
/// together, and how a failing job is set apart from the others of its group.
@Suite("Group commit")
struct GroupCommitTests {
    /// A job: its value, or the error it throws.
    struct Job: Sendable {
        var value: Int
        var fails = false
    }

    struct Failure: Error, Equatable {
        var value: Int
    }

    /// Commits nothing anywhere: records each call and answers as a database would. A call may be
    /// held until ``release()`` so that jobs queue behind it.
    final class ScriptedEngine: GroupCommitEngine {
        struct Call: Equatable {
            var values: [Int]
            var isolated: Bool
        }

        let calls = Mutex<[Call]>([])
        let gate = Mutex<CheckedContinuation<Void, Never>?>(nil)
        let holdsFirstCall: Bool

        init(holdsFirstCall: Bool = false) { self.holdsFirstCall = holdsFirstCall }

        func commit(_ jobs: [Job], isolated: Bool) async throws -> [Result<any Sendable, any Error>] {
            let first = calls.withLock { calls in
                calls.append(Call(values: jobs.map(\.value), isolated: isolated))
                return calls.count == 1
            }
            if first && holdsFirstCall {
                await withCheckedContinuation { continuation in gate.withLock { $0 = continuation } }
            }
            guard isolated else {
                if let failing = jobs.first(where: \.fails) { throw Failure(value: failing.value) }
                return jobs.map { .success($0.value * 10) }
            }
            return jobs.map { $0.fails ? .failure(Failure(value: $0.value)) : .success($0.value * 10) }
        }

        /// Lets the held call go on; `false` while it has not started.
        func release() -> Bool {
            gate.withLock { gate in
                guard let continuation = gate else { return false }
                continuation.resume()
                gate = nil
                return true
            }
        }
    }

    @Test("jobs that arrive while a group commits wait and commit together in the next")
    func jobsWaitingCommitTogether() async throws {
        let engine = ScriptedEngine(holdsFirstCall: true)
        let commits = GroupCommit(engine, largestGroup: 64)
        let results = try await withThrowingTaskGroup(of: Int.self) { group in
            group.addTask { try await commits.submit(Job(value: 0)) as! Int }
            while engine.calls.withLock({ $0.isEmpty }) { await Task.yield() }
            for value in 1...20 {
                group.addTask { try await commits.submit(Job(value: value)) as! Int }
            }
            // Twenty jobs queue behind the held commit.
            while commits.waitingCount < 20 { await Task.yield() }
            while !engine.release() { await Task.yield() }
            var results: [Int] = []
            for try await result in group { results.append(result) }
            return results
        }
        #expect(results.sorted() == (0...20).map { $0 * 10 })
        let calls = engine.calls.withLock { $0 }
        #expect(calls.count == 2)
        #expect(calls[0] == .init(values: [0], isolated: false))
        #expect(calls[1].values.sorted() == Array(1...20) && !calls[1].isolated, "the waiting jobs in one group")
    }

    @Test("a failing job is rolled back alone: its group runs again with a savepoint per job")
    func aFailingJobIsSetApart() async throws {
        let engine = ScriptedEngine(holdsFirstCall: true)
        let commits = GroupCommit(engine, largestGroup: 64)
        let outcomes = await withTaskGroup(of: (Int, Result<Int, Failure>).self) { group in
            @Sendable func run(_ job: Job) async -> (Int, Result<Int, Failure>) {
                do { return (job.value, .success(try await commits.submit(job) as! Int)) } catch {
                    return (job.value, .failure(error as! Failure))
                }
            }
            group.addTask { await run(Job(value: 0)) }
            while engine.calls.withLock({ $0.isEmpty }) { await Task.yield() }
            for value in 1...3 {
                group.addTask { await run(Job(value: value, fails: value == 2)) }
            }
            while commits.waitingCount < 3 { await Task.yield() }
            while !engine.release() { await Task.yield() }
            var outcomes: [Int: Result<Int, Failure>] = [:]
            for await (value, result) in group { outcomes[value] = result }
            return outcomes
        }
        #expect(outcomes[1] == .success(10) && outcomes[3] == .success(30))
        #expect(outcomes[2] == .failure(Failure(value: 2)))
        let calls = engine.calls.withLock { $0 }
        #expect(calls.dropFirst().map(\.isolated) == [false, true], "the group ran as it was, then isolated")
    }

    @Test("a single job that fails gets its error without a second run; after close, jobs are refused")
    func singleFailureAndClose() async throws {
        let engine = ScriptedEngine()
        let commits = GroupCommit(engine)
        await #expect(throws: Failure(value: 7)) { try await commits.submit(Job(value: 7, fails: true)) }
        #expect(engine.calls.withLock { $0.count } == 1)
        #expect(try await commits.submit(Job(value: 1)) as? Int == 10)
        await commits.close()
        await #expect(throws: LedgerStoreError(.unavailable)) { try await commits.submit(Job(value: 2)) }
    }

    /// Records whether each group's work ran on the PostgreSQL ledger's event loop, before and
    /// after it waited.
    final class PlaceRecordingEngine: GroupCommitEngine {
        let places = Mutex<[Bool]>([])

        func commit(_ jobs: [Job], isolated: Bool) async throws -> [Result<any Sendable, any Error>] {
            let before = PostgresEventLoop.shared.loop.inEventLoop
            try await Task.sleep(for: .milliseconds(1))
            let after = PostgresEventLoop.shared.loop.inEventLoop
            places.withLock { $0 += [before, after] }
            return jobs.map { .success($0.value) }
        }
    }

    @Test("a queue given an executor runs its groups there, across their waits; one given none does not")
    func groupsRunOnTheirExecutor() async throws {
        let placed = PlaceRecordingEngine()
        let onLoop = GroupCommit(placed, executor: PostgresEventLoop.shared)
        #expect(try await onLoop.submit(Job(value: 1)) as? Int == 1)
        #expect(placed.places.withLock { $0 } == [true, true])

        let unplaced = PlaceRecordingEngine()
        let anywhere = GroupCommit(unplaced)
        #expect(try await anywhere.submit(Job(value: 2)) as? Int == 2)
        #expect(unplaced.places.withLock { $0 } == [false, false])
    }
}
