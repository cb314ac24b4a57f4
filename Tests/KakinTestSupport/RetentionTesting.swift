import AppStoreModels
import Foundation
import Hummingbird
import HummingbirdTesting
import StoreSandbox
import Synchronization

extension RetentionTiming {
    /// A clock that moves `step` forward at each reading, and a deadline that fires at once
    /// (`deadlineFires`) or never: response times and timeouts decided by the test, not the machine.
    public static func stepping(_ step: Duration, deadlineFires: Bool = false) -> RetentionTiming {
        let readings = Mutex(Duration.zero)
        return RetentionTiming(
            reading: {
                readings.withLock { now in
                    now += step
                    return now
                }
            },
            wait: { _ in
                if deadlineFires { return }
                try await RetentionTesting.untilCancelled()
            })
    }
}

/// Helpers for tests of Retention Messaging.
public enum RetentionTesting {
    /// Returns only when the task is cancelled, by throwing `CancellationError`.
    public static func untilCancelled() async throws {
        let (stream, continuation) = AsyncStream<Void>.makeStream()
        await withTaskCancellationHandler {
            for await _ in stream {}
        } onCancel: {
            continuation.finish()
        }
        throw CancellationError()
    }

    /// A PNG's first bytes as Apple's image checks read them: the signature and an `IHDR` chunk of
    /// `width` × `height` pixels, truecolour without alpha (or with, when `alpha`).
    public static func png(width: UInt32 = 3840, height: UInt32 = 2160, alpha: Bool = false) -> Data {
        var bytes: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0, 0, 0, 13]
        bytes += Array("IHDR".utf8)
        for value in [width, height] { bytes += (0..<4).map { UInt8(truncatingIfNeeded: value >> (24 - 8 * $0)) } }
        bytes += [8, alpha ? 6 : 2, 0, 0, 0, 0, 0, 0, 0]
        return Data(bytes)
    }

    /// Runs `body` with a tiny `Get Retention Message` endpoint listening on a free port of
    /// 127.0.0.1: every POST to `/retention` is answered by `answer` with the request's
    /// `signedPayload`. `body` receives the endpoint's URL.
    public static func withEndpoint<Value: Sendable>(
        answer: @escaping @Sendable (String) async -> (status: Int, body: Data),
        _ body: @Sendable (URL) async throws -> Value
    ) async throws -> Value {
        let router = Router()
        router.post("retention") { request, _ -> Response in
            let buffer = try await request.body.collect(upTo: 1 << 20)
            let posted = try JSONDecoder().decode(RealtimeRequestBody.self, from: Data(buffer: buffer))
            let (status, data) = await answer(posted.signedPayload ?? "")
            return Response(
                status: HTTPResponse.Status(code: status), headers: [.contentType: "application/json"],
                body: .init(byteBuffer: ByteBuffer(bytes: data)))
        }
        let app = Application(router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)))
        return try await app.test(.live) { client in
            guard let port = client.port else { throw CancellationError() }
            return try await body(URL(string: "http://127.0.0.1:\(port)/retention")!)
        }
    }

    /// The body of an answer naming `messageIdentifier`.
    public static func answer(_ messageIdentifier: String) -> Data {
        (try? JSONEncoder().encode(RealtimeResponseBody.message(messageIdentifier))) ?? Data()
    }
}
