import AppStoreModels
import Foundation

/// Sends one signed `Get Retention Message` request and races it against its deadline.
struct RetentionSender: Sendable {
    /// What came back: an answer, or the reason none did, and how long it took.
    struct Exchange: Sendable {
        var status: Int?
        var body: Data?
        /// Why no answer came: `TIMED_OUT` at the deadline, `NO_RESPONSE` when the post failed.
        var failure: SendAttemptResult?
        var elapsed: Duration
    }

    private enum Race: Sendable {
        case answered(Int, Data)
        case unanswered
        case deadline
        case cancelled
    }

    let transport: any RetentionRequestTransport
    let timing: RetentionTiming

    /// POSTs `{"signedPayload": jws}` to `url`; an answer later than `deadline` is not waited for.
    func send(signedPayload jws: String, to url: URL, deadline: Duration) async -> Exchange {
        let body: Data
        do { body = try JSONEncoder().encode(RealtimeRequestBody(signedPayload: jws)) } catch {
            return Exchange(failure: .other, elapsed: .zero)
        }
        let start = timing.reading()
        let race = await withTaskGroup(of: Race.self) { group -> Race in
            group.addTask { [transport] in
                do {
                    let (status, data) = try await transport.post(body, to: url)
                    return .answered(status, data)
                } catch {
                    return .unanswered
                }
            }
            group.addTask { [timing] in
                do { try await timing.wait(deadline) } catch { return .cancelled }
                return .deadline
            }
            var first = Race.cancelled
            while let next = await group.next() {
                first = next
                if case .cancelled = next { continue }
                break
            }
            group.cancelAll()
            return first
        }
        let elapsed = timing.reading() - start
        switch race {
        case .answered(let status, let data): return Exchange(status: status, body: data, elapsed: elapsed)
        case .unanswered: return Exchange(failure: .noResponse, elapsed: elapsed)
        case .deadline, .cancelled: return Exchange(failure: .timedOut, elapsed: elapsed)
        }
    }
}

extension Duration {
    /// The duration in whole milliseconds, rounded down.
    var wholeMilliseconds: Int64 {
        let parts = components
        return parts.seconds * 1000 + parts.attoseconds / 1_000_000_000_000_000
    }
}
