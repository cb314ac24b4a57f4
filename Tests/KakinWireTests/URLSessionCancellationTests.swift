import Foundation
import Hummingbird
import HummingbirdTesting
import KakinWire
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

@Suite struct URLSessionCancellationTests {
    /// A small server on a loopback port, answering every GET with its path.
    private static func application() -> some ApplicationProtocol {
        let router = Router()
        router.get("echo/{word}") { _, context in try context.parameters.require("word") }
        return Application(router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)))
    }

    @Test func aRequestAnswersAsDataForDoes() async throws {
        try await Self.application().test(.live) { client in
            let port = try #require(client.port)
            let url = try #require(URL(string: "http://127.0.0.1:\(port)/echo/kakin"))
            let (body, response) = try await URLSession.shared.cancellableData(for: URLRequest(url: url))
            #expect((response as? HTTPURLResponse)?.statusCode == 200)
            #expect(String(decoding: body, as: UTF8.self) == "kakin")
        }
    }

    /// Requests cancelled while their answers arrive all end: on Linux, `data(for:)` could hang
    /// here, its cancellation waiting for the session's queue while the queue waited for the task.
    /// The limit catches such a hang; it is generous because the full suite runs this beside
    /// hundreds of other tests on two cores, where its 200 requests have taken over a minute.
    @Test(.timeLimit(.minutes(3))) func requestsCancelledAsTheyAreAnsweredAllEnd() async throws {
        try await Self.application().test(.live) { client in
            let port = try #require(client.port)
            let url = try #require(URL(string: "http://127.0.0.1:\(port)/echo/race"))
            for round in 0..<5 {
                let ended = await withTaskGroup(of: Bool.self) { group in
                    for _ in 0..<40 {
                        group.addTask {
                            do {
                                _ = try await URLSession.shared.cancellableData(for: URLRequest(url: url))
                            } catch {}
                            return true
                        }
                    }
                    // Let some requests be answered before the rest are cancelled.
                    _ = await group.next()
                    group.cancelAll()
                    var count = 1
                    for await _ in group { count += 1 }
                    return count
                }
                #expect(ended == 40, "round \(round)")
            }
        }
    }
}
