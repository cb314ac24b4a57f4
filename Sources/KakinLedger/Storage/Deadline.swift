import NIOCore
import NIOPosix
import Synchronization

/// Waiting for an operation no longer than a limit.
enum Deadline {
    /// `operation`'s result, or `nil` when it has not returned within `limit`. The operation is
    /// left to finish on its own then (the caller closes its connection): what waits for it is
    /// never held longer than `limit`, even by a statement that is never answered.
    static func run<R: Sendable>(
        _ limit: Duration, executor: (any TaskExecutor)? = nil, _ operation: @escaping @Sendable () async -> R
    ) async -> R? {
        let answered = Mutex(false)
        let components = limit.components
        let nanoseconds = components.seconds * 1_000_000_000 + components.attoseconds / 1_000_000_000
        return await withCheckedContinuation { (continuation: CheckedContinuation<R?, Never>) in
            let resume: @Sendable (R?) -> Void = { value in
                let first = answered.withLock { done -> Bool in
                    defer { done = true }
                    return !done
                }
                if first { continuation.resume(returning: value) }
            }
            // A timer on an event loop, cancelled as soon as the operation returns: no task waits
            // out the limit for the many operations that end in time.
            let timer = MultiThreadedEventLoopGroup.singleton.any().scheduleTask(in: .nanoseconds(nanoseconds)) {
                resume(nil)
            }
            Task(executorPreference: executor) {
                let value = await operation()
                timer.cancel()
                resume(value)
            }
        }
    }
}
