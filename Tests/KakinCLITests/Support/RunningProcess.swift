import Foundation
import KakinTestSupport
import Synchronization
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A `kakin` process started by a test, its output collected as it comes.
///
/// Each pipe is read by a thread of its own with blocking reads, not with a `readabilityHandler`:
/// on Linux, many handlers set up and torn down at once can crash libdispatch's event loop.
final class RunningProcess: Sendable {
    let process: Process
    private let stdout = TextBuffer()
    private let stderr = TextBuffer()
    /// Left by each reader thread at the end of its pipe.
    private let readers = DispatchGroup()

    /// Starts `kakin` with `arguments`; with `prelude`, through `/bin/sh`, which runs the prelude
    /// (`ulimit -Sn 256`, say) and then replaces itself with `kakin`.
    init(_ arguments: [String], environment: [String: String] = [:], prelude: String? = nil) throws {
        guard let binary = BinaryTests.binary else { throw CancellationError() }
        let process = Process()
        if let prelude {
            process.executableURL = URL(fileURLWithPath: "/bin/sh")
            process.arguments = ["-c", prelude + "; exec \"$0\" \"$@\"", binary.path] + arguments
        } else {
            process.executableURL = binary
            process.arguments = arguments
        }
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { _, new in new }
        let out = Pipe()
        let err = Pipe()
        process.standardOutput = out
        process.standardError = err
        process.standardInput = FileHandle.nullDevice
        self.process = process
        try process.run()
        for (handle, buffer) in [(out.fileHandleForReading, stdout), (err.fileHandleForReading, stderr)] {
            readers.enter()
            Thread.detachNewThread { [readers] in
                // `availableData` blocks until there is output, and is empty at the end of the pipe.
                while case let data = handle.availableData, !data.isEmpty {
                    buffer.text.withLock { $0 += String(decoding: data, as: UTF8.self) }
                }
                readers.leave()
            }
        }
    }

    var output: String { stdout.text.withLock { $0 } }
    var errors: String { stderr.text.withLock { $0 } }

    /// Waits until standard output holds `text` (or the process ended); the output so far.
    func waitForOutput(containing text: String, timeout: Duration = .seconds(60)) async throws -> String {
        guard let current = try await outputOrExit(containing: text, timeout: timeout) else {
            Issue.record("the process ended (\(process.terminationStatus)) before printing \(text): \(errors)")
            throw CancellationError()
        }
        return current
    }

    /// The output so far once standard output holds `text`, or `nil` when the process ended first.
    func outputOrExit(containing text: String, timeout: Duration = .seconds(60)) async throws -> String? {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            let current = output
            if current.contains(text) { return current }
            if !process.isRunning { return nil }
            try await Task.sleep(for: .milliseconds(20))
        }
        Issue.record("no \(text) within \(timeout): \(output) \(errors)")
        throw CancellationError()
    }

    /// Sends `signal` and waits for the exit status, without holding a thread of the tests' pool.
    func stop(signal: Int32 = SIGTERM) async -> Int32 {
        if process.isRunning { kill(process.processIdentifier, signal) }
        return await exitStatus()
    }

    /// Sends `signal` and waits for the exit status, blocking the calling thread: for `defer`,
    /// which cannot wait otherwise.
    func stop(signal: Int32 = SIGTERM) -> Int32 {
        if process.isRunning { kill(process.processIdentifier, signal) }
        return exitStatus()
    }

    /// Waits for the process to end by itself, then for its readers to collect what it wrote
    /// last, on a thread of its own: a test waiting here leaves the pool its tasks share (two
    /// threads on a two-core machine) to the other tests, whose servers may be the ones it needs.
    /// A process still running after `limit` is recorded as an issue and killed.
    func exitStatus(within limit: Duration = .seconds(120)) async -> Int32 {
        let deadline = ContinuousClock.now + limit
        while process.isRunning {
            if ContinuousClock.now > deadline {
                Issue.record("the process did not end within \(limit); killed: \(output) \(errors)")
                kill(process.processIdentifier, SIGKILL)
                break
            }
            try? await Task.sleep(for: .milliseconds(20))
        }
        return await withCheckedContinuation { continuation in
            Thread.detachNewThread { continuation.resume(returning: self.exitStatus()) }
        }
    }

    /// Waits for the process to end by itself, then for its readers, blocking the calling thread.
    func exitStatus() -> Int32 {
        process.waitUntilExit()
        _ = readers.wait(timeout: .now() + 30)
        return process.terminationStatus
    }
}

/// Text collected from a pipe.
final class TextBuffer: Sendable {
    let text = Mutex("")
}

/// One HTTP exchange with a local server.
func exchange(
    _ method: String, _ url: String, headers: [String: String] = [:], json: Any? = nil
) async throws -> (status: Int, body: [String: Any], raw: Data) {
    var request = URLRequest(url: URL(string: url)!, timeoutInterval: 30)
    request.httpMethod = method
    for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
    if let json {
        request.httpBody = try JSONSerialization.data(withJSONObject: json)
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
    }
    let (data, response) = try await URLSession.shared.data(for: request)
    let object = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any] ?? [:]
    return ((response as? HTTPURLResponse)?.statusCode ?? 0, object, data)
}

/// A browser's request to the dashboard, without following redirects or keeping cookies: the
/// status, the response's headers (`Set-Cookie` joined by newlines) and the body.
func dashboardRequest(
    _ method: String, _ url: String, cookies: [String: String] = [:], form: [String: String]? = nil
) async throws -> (status: Int, headers: [String: String], body: String) {
    var request = URLRequest(url: URL(string: url)!, timeoutInterval: 30)
    request.httpMethod = method
    request.httpShouldHandleCookies = false
    if !cookies.isEmpty {
        request.setValue(cookies.map { "\($0.key)=\($0.value)" }.joined(separator: "; "), forHTTPHeaderField: "Cookie")
    }
    if let form {
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._~")
        request.httpBody = Data(
            form.map { "\($0.key)=\($0.value.addingPercentEncoding(withAllowedCharacters: allowed) ?? $0.value)" }
                .joined(separator: "&").utf8)
        request.setValue("application/x-www-form-urlencoded", forHTTPHeaderField: "Content-Type")
    }
    let session = URLSession(configuration: .ephemeral, delegate: NoRedirects(), delegateQueue: nil)
    defer { session.finishTasksAndInvalidate() }
    let (data, response) = try await session.data(for: request)
    let http = response as? HTTPURLResponse
    var headers: [String: String] = [:]
    for (name, value) in http?.allHeaderFields ?? [:] {
        if let name = name as? String, let value = value as? String { headers[name.lowercased()] = value }
    }
    return (http?.statusCode ?? 0, headers, String(decoding: data, as: UTF8.self))
}

/// Refuses every redirect, so that the test sees the 303 itself.
private final class NoRedirects: NSObject, URLSessionTaskDelegate, Sendable {
    func urlSession(
        _ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
        newRequest request: URLRequest, completionHandler: @escaping (URLRequest?) -> Void
    ) {
        completionHandler(nil)
    }
}
