import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Makes the writer's commits durable on a thread of its own, so that the writer runs the next
/// group while the last one is flushed.
///
/// The writer commits with `synchronous = NORMAL` (SQLite writes the log but does not flush it at
/// a commit) and hands each commit here; this thread flushes the log (`fdatasync`), one flush for
/// every commit made since the last, and only then answers the commit's jobs. So an answer still
/// means its write is on disk, and the writer is never idle while the disk flushes.
///
/// Readers see a commit as soon as SQLite made it, possibly before its flush. A read that may have
/// seen one waits for it (``durable()``), so what a read answers is on disk too.
///
/// Each commit has a number (``beginCommit()``), given out before SQLite makes it visible; the
/// numbers are flushed in order.
///
/// A flush that fails leaves it unknown what reached the disk (the system may have dropped the
/// pages it could not write), so from then on nothing is answered: every commit and every read
/// gets that failure, until the server is restarted and SQLite recovers the log as it is on disk.
final class SQLiteLogSyncer: Sendable {
    /// Flushes the log; throws when it cannot. The default flushes the log file of `database`.
    typealias Flush = @Sendable () throws -> Void

    private struct Entry {
        let number: UInt64
        /// Answers the commit's callers: `nil` once the log is flushed, or the flush's failure.
        let answer: @Sendable ((any Error)?) -> Void
        /// Whether the commit wrote anything (a failed commit only takes its number).
        let needsFlush: Bool
    }

    private struct State {
        /// Reads waiting for a number to be flushed.
        var waiters: [(number: UInt64, continuation: CheckedContinuation<Void, any Error>)] = []
        /// The first flush's failure: from then on, the answer to everything.
        var failure: (any Error)?
    }

    private let state = Mutex(State())
    private let thread: BatchThread<Entry>
    /// The last number given out.
    private let given = Atomic<UInt64>(0)
    /// The last number flushed (or failed): every commit up to it is answered.
    private let flushed = Atomic<UInt64>(0)
    /// Whether a flush failed (``State/failure`` is set).
    private let failed = Atomic<Bool>(false)
    private let flush: Flush

    /// - Parameters:
    ///   - name: the thread's name, as `top -H` and `perf` show it (Linux keeps 15 bytes).
    ///   - flush: flushes the log.
    init(name: String, flush: @escaping Flush) {
        self.flush = flush
        thread = BatchThread(name: name)
        thread.start { [self] entries in handle(entries) }
    }

    /// A syncer that flushes the write-ahead log of the database file at `path`.
    convenience init(name: String, databasePath path: String) {
        self.init(name: name, flush: SQLiteLogFile(databasePath: path).flush)
    }

    /// The number of the commit the writer is about to make. Taken before `COMMIT`, so that a read
    /// that saw the commit finds a number at least as high when it finishes.
    func beginCommit() -> UInt64 {
        given.add(1, ordering: .sequentiallyConsistent).newValue
    }

    /// Hands over commit `number`: `answer` runs on this syncer's thread once the log holding it is
    /// flushed (with `nil`), or with the failure of a flush. A commit that wrote nothing (it
    /// failed) passes `needsFlush: false`: its number only keeps the order.
    func committed(_ number: UInt64, needsFlush: Bool, answer: @escaping @Sendable ((any Error)?) -> Void) {
        thread.submit(Entry(number: number, answer: answer, needsFlush: needsFlush))
    }

    /// Returns once every commit a read that has just finished could have seen is on disk (at
    /// once when nothing is waiting for a flush), or throws when a flush failed.
    func durable() async throws {
        let number = given.load(ordering: .sequentiallyConsistent)
        if flushed.load(ordering: .sequentiallyConsistent) >= number, !failed.load(ordering: .sequentiallyConsistent) {
            return
        }
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            let ready = state.withLock { state -> Result<Void, any Error>? in
                if let failure = state.failure { return .failure(failure) }
                guard flushed.load(ordering: .sequentiallyConsistent) < number else { return .success(()) }
                state.waiters.append((number, continuation))
                return nil
            }
            if let ready { continuation.resume(with: ready) }
        }
    }

    /// Flushes and answers what is left, then ends the thread. Safe to call more than once.
    func close() async {
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            thread.stop { [self] in
                // Nothing is left to flush: the waiting reads saw only flushed commits.
                let waiters = state.withLock { state in
                    defer { state.waiters = [] }
                    return state.waiters.map(\.continuation)
                }
                for waiter in waiters { waiter.resume() }
                done.resume()
            }
        }
    }

    /// Flushes the log once for a batch of commits, then answers them and the reads waiting for them.
    private func handle(_ entries: [Entry]) {
        var failure = state.withLock { $0.failure }
        if failure == nil, entries.contains(where: \.needsFlush) {
            do { try flush() } catch {
                let error = error as? LedgerStoreError
                    ?? LedgerStoreError(.unavailable, "the write-ahead log could not be flushed: \(error)")
                failure = error
                state.withLock { $0.failure = error }
                failed.store(true, ordering: .sequentiallyConsistent)
            }
        }
        let last = entries[entries.count - 1].number
        flushed.store(last, ordering: .sequentiallyConsistent)
        for entry in entries { entry.answer(failure) }
        let ready = state.withLock { state -> [CheckedContinuation<Void, any Error>] in
            let ready = state.waiters.filter { failure != nil || $0.number <= last }.map(\.continuation)
            state.waiters.removeAll { failure != nil || $0.number <= last }
            return ready
        }
        for continuation in ready {
            if let failure { continuation.resume(throwing: failure) } else { continuation.resume() }
        }
    }
}

/// The write-ahead log of a SQLite database file, opened for flushing.
///
/// The log is opened at the first flush (SQLite creates it at the first write) and stays open:
/// SQLite keeps the same file while a connection is open, resetting it in place. Its directory is
/// flushed once, so that a log SQLite has just created is found after a power cut.
final class SQLiteLogFile: Sendable {
    private let path: String
    private let descriptor = Mutex<Int32>(-1)

    init(databasePath: String) {
        path = databasePath + "-wal"
    }

    deinit {
        let descriptor = descriptor.withLock { $0 }
        if descriptor >= 0 { close(descriptor) }
    }

    /// Flushes the log's data to disk (`fdatasync` where there is one).
    func flush() throws {
        try descriptor.withLock { descriptor in
            if descriptor < 0 {
                let opened = open(path, O_WRONLY | O_CLOEXEC)
                guard opened >= 0 else { throw failure("cannot open the write-ahead log \(path)") }
                let directory = (path as NSString).deletingLastPathComponent
                let parent = open(directory.isEmpty ? "." : directory, O_RDONLY | O_CLOEXEC)
                guard parent >= 0, fsync(parent) == 0 else {
                    let error = failure("cannot flush the directory of \(path)")
                    if parent >= 0 { close(parent) }
                    close(opened)
                    throw error
                }
                close(parent)
                descriptor = opened
            }
            var result: Int32
            repeat {
                #if os(Linux)
                result = fdatasync(descriptor)
                #else
                result = fsync(descriptor)
                #endif
            } while result != 0 && errno == EINTR
            guard result == 0 else { throw failure("cannot flush the write-ahead log \(path)") }
        }
    }

    private func failure(_ message: String) -> LedgerStoreError {
        LedgerStoreError(.unavailable, "\(message): \(String(cString: strerror(errno)))")
    }
}
