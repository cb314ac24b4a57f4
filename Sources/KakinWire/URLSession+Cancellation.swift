public import Foundation

#if canImport(FoundationNetworking)
    public import FoundationNetworking
    import Synchronization
#endif

extension URLSession {
    /// The body and response of `request`, as `data(for:)` gives them, and as safe to cancel on
    /// every platform.
    ///
    /// On Apple platforms this is `data(for:)`. On Linux, FoundationNetworking's `data(for:)` can
    /// deadlock when its task is cancelled while the session is handling the answer: the
    /// cancellation handler runs under the task's lock and waits for the session's queue, while
    /// that queue waits for the task's lock to resume it. Here the request is a data task whose
    /// cancellation is handed to another queue, so the handler waits for nothing; a cancelled
    /// request still ends promptly with `URLError.cancelled`.
    public func cancellableData(for request: URLRequest) async throws -> (Data, URLResponse) {
        #if canImport(FoundationNetworking)
            let handle = CancellableTask()
            return try await withTaskCancellationHandler {
                try await withCheckedThrowingContinuation { continuation in
                    let task = dataTask(with: request) { data, response, error in
                        handle.finish()
                        if let error {
                            continuation.resume(throwing: error)
                        } else if let response {
                            continuation.resume(returning: (data ?? Data(), response))
                        } else {
                            continuation.resume(throwing: URLError(.badServerResponse))
                        }
                    }
                    handle.start(task)
                }
            } onCancel: {
                handle.cancel()
            }
        #else
            return try await data(for: request)
        #endif
    }
}

#if canImport(FoundationNetworking)
    /// A data task and whether its Swift task was cancelled, whichever comes first: a task
    /// cancelled before its request started is cancelled as it starts; one that has answered is
    /// not cancelled any more.
    private final class CancellableTask: Sendable {
        private let state = Mutex<(task: URLSessionTask?, cancelled: Bool, finished: Bool)>((nil, false, false))

        /// Starts `task`, or cancels it at once when the Swift task was cancelled already.
        func start(_ task: URLSessionTask) {
            let cancelled = state.withLock { state in
                state.task = task
                return state.cancelled
            }
            task.resume()
            if cancelled { cancelElsewhere(task) }
        }

        /// Cancels the started task, if any; called from the cancellation handler.
        func cancel() {
            let task = state.withLock { state in
                state.cancelled = true
                return state.task
            }
            if let task { cancelElsewhere(task) }
        }

        /// Records that the task has answered: it is not cancelled after that (FoundationNetworking
        /// stops with a fatal error when a task it no longer holds is cancelled).
        func finish() {
            state.withLock { $0.finished = true }
        }

        /// `URLSessionTask.cancel()` waits for the session's queue: never under a lock of ours or
        /// of the Swift task's. A task that answered meanwhile is left alone.
        private func cancelElsewhere(_ task: URLSessionTask) {
            DispatchQueue.global().async {
                guard !self.state.withLock({ $0.finished }) else { return }
                task.cancel()
            }
        }
    }
#endif
