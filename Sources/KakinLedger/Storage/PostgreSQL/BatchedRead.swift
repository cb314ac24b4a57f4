import NIOCore
import Synchronization

/// Reads of one kind that requests ask for at the same moment, answered together by one statement
/// (PostgreSQL): a round trip, a lease of a connection and a statement's fixed cost shared by every
/// request of the batch instead of paid by each.
///
/// Up to ``lanes`` batches run at once. A read that finds a lane free runs at once, alone, so an
/// idle server adds no wait; while every lane is busy, reads queue, and the next lane to finish
/// takes everything waiting (up to ``maxBatch``) as its next batch. Each read is answered on the
/// event loop it waits on (``HomeLoop``).
final class BatchedRead<Key: Hashable & Sendable, Value: Sendable>: Sendable {
    /// Reads the values of distinct `keys` (at most ``maxBatch``), each key absent from the
    /// answer having none.
    typealias Run = @Sendable (_ keys: [Key]) async throws -> [Key: Value]

    private struct Waiter: Sendable {
        let key: Key
        let continuation: CheckedContinuation<Value?, any Error>
        let home: (any EventLoop)?
    }

    private struct State {
        var waiting: [Waiter] = []
        var running = 0
    }

    let lanes: Int
    let maxBatch: Int
    private let run: Run
    private let state = Mutex(State())
    private let largest = Atomic<Int>(0)

    /// The most distinct keys one batch has read.
    var largestBatch: Int { largest.load(ordering: .relaxed) }

    init(lanes: Int, maxBatch: Int, run: @escaping Run) {
        self.lanes = max(1, lanes)
        self.maxBatch = max(1, maxBatch)
        self.run = run
    }

    /// The value of `key`, read in the next batch, or `nil` when it has none.
    func read(_ key: Key) async throws -> Value? {
        try await withCheckedThrowingContinuation { continuation in
            let waiter = Waiter(key: key, continuation: continuation, home: HomeLoop.current)
            let start = state.withLock { state -> Bool in
                state.waiting.append(waiter)
                guard state.running < lanes else { return false }
                state.running += 1
                return true
            }
            if start { Task { await self.lane() } }
        }
    }

    /// Runs batches until nothing waits.
    private func lane() async {
        while let (batch, keys) = next() {
            largest.max(keys.count, ordering: .relaxed)
            let answer: Result<[Key: Value], any Error>
            do { answer = .success(try await run(keys)) } catch { answer = .failure(error) }
            HomeLoop.resume(
                batch.map { waiter in
                    (waiter.home, { waiter.continuation.resume(with: answer.map { $0[waiter.key] }) })
                })
        }
    }

    /// The next batch and its distinct keys, or `nil` (the lane ends) when nothing waits.
    private func next() -> (waiters: [Waiter], keys: [Key])? {
        state.withLock { state in
            guard !state.waiting.isEmpty else {
                state.running -= 1
                return nil
            }
            // Distinct keys are what a batch is limited by; waiters for a key already taken ride along.
            var keys: [Key] = []
            var seen = Set<Key>()
            var end = 0
            while end < state.waiting.count {
                let key = state.waiting[end].key
                if seen.insert(key).inserted {
                    guard keys.count < maxBatch else { break }
                    keys.append(key)
                }
                end += 1
            }
            defer { state.waiting.removeFirst(end) }
            return (Array(state.waiting[..<end]), keys)
        }
    }
}
