import Foundation
import KakinShopModel
import Observation
import Synchronization
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Waits until `condition`, which reads observable state (the model, the SDK's store), holds: it is
/// evaluated again each time something it read changes, and never on a timer. `timeout` bounds the
/// wait; past it the test fails.
@MainActor
func waitUntil(
    _ what: Comment, timeout: Duration = .seconds(60), sourceLocation: SourceLocation = #_sourceLocation,
    _ condition: @escaping @MainActor () -> Bool
) async throws {
    let (changes, continuation) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
    let deadline = Task {
        try? await Task.sleep(for: timeout)
        continuation.finish()
    }
    defer {
        deadline.cancel()
        continuation.finish()
    }
    func holds() -> Bool {
        withObservationTracking { condition() } onChange: { continuation.yield() }
    }
    if holds() { return }
    for await _ in changes where holds() { return }
    Issue.record("timed out waiting until \(what)", sourceLocation: sourceLocation)
    throw CancellationError()
}

/// Reads the customer again until `condition` holds, for what the purchase server learns from the
/// App Store's notifications: the SDK has no signal for those (an app refreshes when it comes to
/// the foreground), so this asks the server at most five times a second until the notification
/// has arrived, within `timeout`.
@MainActor
func refreshUntil(
    _ what: Comment, _ model: ShopModel, timeout: Duration = .seconds(60),
    sourceLocation: SourceLocation = #_sourceLocation, _ condition: @escaping @MainActor () -> Bool
) async throws {
    let deadline = ContinuousClock.now + timeout
    while true {
        await model.refresh()
        if condition() { return }
        guard ContinuousClock.now < deadline else {
            Issue.record("timed out waiting until \(what): \(model.banner)", sourceLocation: sourceLocation)
            throw CancellationError()
        }
        try await Task.sleep(for: .milliseconds(200))
    }
}

/// The sandbox App Store's clock as the app sees it: the test moves the sandbox's clock through the
/// control API, and the model reads the banner at the sandbox's time, as a device whose own clock
/// had moved as far would.
final class SandboxTime: Sendable {
    private let offset = Mutex<TimeInterval>(0)

    /// The sandbox's time now.
    var now: Date { Date().addingTimeInterval(offset.withLock { $0 }) }

    /// Follows the sandbox's clock from its answer's `now`.
    func follow(_ sandboxNow: Date) {
        offset.withLock { $0 = sandboxNow.timeIntervalSinceNow }
    }
}

/// The sandbox App Store's control and device APIs, as a test drives them from outside the app.
struct SandboxControl {
    let serve: KakinServe

    /// Adds a tester who buys in `storefront`.
    func addTester(_ id: String, storefront: String = "USA") async throws {
        let answer = try await send(
            "POST", "v1/control/testers", ["id": id, "name": "\(id)@example.com", "storefront": storefront])
        #expect(answer.status == 201 || answer.status == 200, "\(answer.text)")
    }

    /// Sets the sandbox's settings (a partial update).
    func settings(_ values: [String: Any]) async throws {
        let answer = try await send("PUT", "v1/control/settings", values)
        #expect(answer.status == 200, "\(answer.text)")
    }

    /// Moves the sandbox's clock forward (renewals due meanwhile are processed, their notifications
    /// sent to the server shortly after) and returns its time.
    func advanceClock(by seconds: TimeInterval) async throws -> Date {
        let answer = try await send("POST", "v1/control/clock", ["advanceSeconds": seconds])
        #expect(answer.status == 200, "\(answer.text)")
        let milliseconds = try #require(answer.json["now"] as? Double, "\(answer.text)")
        return Date(timeIntervalSince1970: milliseconds / 1000)
    }

    /// A subscription action: `fail-renewals`, `resolve-billing`, `auto-renew/off`, `auto-renew/on`, `renew`.
    func subscription(_ originalTransactionID: String, _ action: String) async throws {
        let answer = try await send("POST", "v1/control/subscriptions/\(originalTransactionID)/\(action)")
        #expect((200..<300).contains(answer.status), "\(action): \(answer.text)")
    }

    /// What the offer code redemption sheet does when the customer types `code`.
    func redeem(_ code: String, tester: String) async throws -> [String: Any] {
        let answer = try await send("POST", "v1/device/testers/\(tester)/offer-codes/redeem", ["code": code])
        #expect(answer.status == 200, "\(answer.text)")
        return answer.json
    }

    private func send(
        _ method: String, _ path: String, _ json: [String: Any]? = nil
    ) async throws -> (status: Int, json: [String: Any], text: String) {
        try await exchange(method, serve.sandboxURL.appendingPathComponent(path), json: json)
    }
}

/// One HTTP exchange with a local server: the status, the JSON object answered (empty when none),
/// and the body as text.
func exchange(
    _ method: String, _ url: URL, headers: [String: String] = [:], json: [String: Any]? = nil, body: Data? = nil
) async throws -> (status: Int, json: [String: Any], text: String) {
    var request = URLRequest(url: url, timeoutInterval: 60)
    request.httpMethod = method
    for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
    if let json {
        request.httpBody = try JSONSerialization.data(withJSONObject: json)
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
    } else if let body {
        request.httpBody = body
        request.setValue("application/octet-stream", forHTTPHeaderField: "Content-Type")
    }
    let (data, response) = try await URLSession.shared.data(for: request)
    let object = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any] ?? [:]
    return ((response as? HTTPURLResponse)?.statusCode ?? 0, object, String(decoding: data, as: UTF8.self))
}
