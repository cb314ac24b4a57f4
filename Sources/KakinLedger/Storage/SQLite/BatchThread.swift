import Foundation
import Synchronization

/// A thread of its own that handles what is submitted to it in batches, in order: each time it
/// wakes it takes everything waiting; with nothing waiting it sleeps.
final class BatchThread<Item: Sendable>: Sendable {
    private struct State {
        var items: [Item] = []
        var stopped = false
        var ended = false
        /// What runs on the thread once it has handled its last batch (``stop(whenEnded:)``).
        var whenEnded: [@Sendable () -> Void] = []
    }

    private let state = Mutex(State())
    private let wakeUp = NSCondition()
    private let name: String

    /// - Parameter name: the thread's name, as `top -H` and `perf` show it (Linux keeps 15 bytes).
    init(name: String) {
        self.name = name
    }

    /// Starts the thread; `handle` runs on it with each batch. Called once.
    func start(_ handle: @escaping @Sendable ([Item]) -> Void) {
        let name = name
        let thread = Thread { [self] in
            #if os(Linux)
            // Foundation names the thread for itself only; the system would show its creator's name.
            try? String(decoding: name.utf8.prefix(15), as: UTF8.self).write(
                toFile: "/proc/thread-self/comm", atomically: false, encoding: .utf8)
            #endif
            run(handle)
        }
        thread.name = name
        thread.start()
    }

    func submit(_ item: Item) {
        state.withLock { $0.items.append(item) }
        signal()
    }

    /// Lets the thread end once everything submitted is handled; `whenEnded` runs on it then, or
    /// at once when it has already ended. Safe to call more than once.
    func stop(whenEnded: @escaping @Sendable () -> Void = {}) {
        let ended = state.withLock { state -> Bool in
            state.stopped = true
            guard !state.ended else { return true }
            state.whenEnded.append(whenEnded)
            return false
        }
        if ended { return whenEnded() }
        signal()
    }

    private func signal() {
        wakeUp.lock()
        wakeUp.signal()
        wakeUp.unlock()
    }

    private func run(_ handle: @Sendable ([Item]) -> Void) {
        while true {
            let (items, stopped) = state.withLock { state -> ([Item], Bool) in
                defer { state.items.removeAll(keepingCapacity: true) }
                return (state.items, state.stopped)
            }
            if !items.isEmpty {
                handle(items)
                continue
            }
            if stopped { break }
            wakeUp.lock()
            if state.withLock({ $0.items.isEmpty && !$0.stopped }) { wakeUp.wait() }
            wakeUp.unlock()
        }
        let whenEnded = state.withLock { state in
            defer {
                state.whenEnded = []
                state.ended = true
            }
            return state.whenEnded
        }
        for action in whenEnded { action() }
    }
}
