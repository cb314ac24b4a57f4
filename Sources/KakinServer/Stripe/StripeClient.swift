import Foundation
import KakinWire

/// Kakin's client for Stripe's REST API, over an ``HTTPExchange``.
///
/// Every request carries the secret key as a bearer token and the pinned ``apiVersion`` as
/// `Stripe-Version`, so the objects Stripe answers have the shape the models here read, whatever
/// version the Stripe account defaults to. Parameters go form-encoded (``StripeForm``), in the
/// body of a POST and in the query of a GET. Answers are JSON, decoded into the models of
/// `StripeObjects.swift`; a refusal, no answer or an unreadable answer is thrown as a
/// ``StripeError``.
///
/// Every write (POST or DELETE) carries an `Idempotency-Key`: the caller's, for a write whose
/// retry must never act twice (derive it from Kakin's own identifiers: a purchase, a refund
/// request), or else a new one made by ``makeIdempotencyKey`` for the call. Stripe keeps a key's
/// first answer for 24 hours and replays it for a request with the same key, so sending a call
/// again is safe. (Stripe ignores the key on a DELETE, which is idempotent already; it is sent
/// all the same, so that every write looks alike.)
///
/// A call whose failure is retryable (no answer, 429, 5xx, or Stripe's `Stripe-Should-Retry:
/// true`) is sent again, with the same idempotency key, up to ``attempts`` times in all, after
/// ``pause`` waits of 0.5, 1, 2… seconds; then the last failure is thrown.
struct StripeClient: Sendable {
    /// The Stripe API version every request asks for.
    ///
    /// 2024-06-20 is the last version before Stripe's 2025 ("basil") changes, and the one whose
    /// objects match what the test emulator (localstripe) returns: an invoice names its
    /// `subscription`, `charge` and `payment_intent` at its top level, a subscription its
    /// `current_period_start` and `current_period_end`, and a payment intent its `latest_charge`.
    /// Later versions move those fields, so moving to one means changing the models with it.
    static let apiVersion = "2024-06-20"

    /// Stripe's API host.
    static let defaultBaseURL = URL(string: "https://api.stripe.com")!

    /// How Stripe's JSON is read: times are Unix seconds. A `JSONDecoder` is safe to share once
    /// configured.
    static let decoder: JSONDecoder = {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .secondsSince1970
        return decoder
    }()

    /// Where requests go: Stripe's host, or an emulator's in tests.
    let baseURL: URL
    /// The secret key (`sk_live_…`, `sk_test_…` or a restricted `rk_…` key).
    private let secretKey: String
    /// Sends the requests.
    let exchange: any HTTPExchange

    /// How many times a call is sent in all while its failure is retryable.
    var attempts = 3
    /// Makes the idempotency key of a write the caller gave none for (tests make predictable ones).
    var makeIdempotencyKey: @Sendable () -> String = { UUID().uuidString }
    /// Waits before a call is sent again (tests record the waits instead of sleeping).
    var pause: @Sendable (Duration) async throws -> Void = { try await Task.sleep(for: $0) }

    /// A client that reaches Stripe at `baseURL` with `secretKey`, over `exchange`.
    init(secretKey: String, baseURL: URL = defaultBaseURL, exchange: any HTTPExchange = URLSessionExchange()) {
        self.secretKey = secretKey
        self.baseURL = baseURL
        self.exchange = exchange
    }

    /// The HTTP methods the client uses.
    enum Method: String, Sendable {
        case get = "GET"
        case post = "POST"
        case delete = "DELETE"
    }

    /// Sends `method <baseURL><path>` with `form`, and decodes Stripe's answer as `Response`.
    ///
    /// A write carries `idempotencyKey`, or a key made for this call; each sending of the call,
    /// first or again, carries the same one.
    func send<Response: Decodable>(
        _ method: Method, _ path: String, form: StripeForm = StripeForm(), idempotencyKey: String? = nil,
        as type: Response.Type = Response.self
    ) async throws(StripeError) -> Response {
        var text = baseURL.absoluteString
        while text.hasSuffix("/") { text.removeLast() }
        text += path
        if method == .get, !form.isEmpty { text += "?" + form.query }
        guard let url = URL(string: text) else {
            throw StripeError(kind: .invalidRequest, message: "not a URL: \(text)", isRetryable: false)
        }
        var headers = [
            "Authorization": "Bearer \(secretKey)",
            "Stripe-Version": Self.apiVersion,
            "Accept": "application/json",
        ]
        var body: Data?
        if method != .get {
            headers["Idempotency-Key"] = idempotencyKey ?? makeIdempotencyKey()
            if !form.isEmpty {
                headers["Content-Type"] = "application/x-www-form-urlencoded"
                body = Data(form.body.utf8)
            }
        }
        let answer = try await exchange(method, url: url, headers: headers, body: body)
        do {
            return try Self.decoder.decode(Response.self, from: answer.body)
        } catch {
            throw StripeError.unreadable(
                "\(Response.self)", status: answer.status, cause: error, requestID: answer.headers["request-id"])
        }
    }

    /// Sends one request, again while its failure is retryable and ``attempts`` allow; returns
    /// the first 2xx answer.
    private func exchange(
        _ method: Method, url: URL, headers: [String: String], body: Data?
    ) async throws(StripeError) -> HTTPAnswer {
        var attempt = 1
        while true {
            let failure: StripeError
            do {
                let answer = try await exchange.answer(method: method.rawValue, url: url, headers: headers, body: body)
                if (200..<300).contains(answer.status) { return answer }
                failure = StripeError.refusal(answer)
            } catch {
                failure = StripeError.noAnswer(error)
            }
            guard failure.isRetryable, attempt < attempts else { throw failure }
            do { try await pause(.milliseconds(500 << min(attempt - 1, 6))) } catch { throw failure }
            attempt += 1
        }
    }

    /// `id` as one segment of a URL's path.
    static func segment(_ id: String) -> String { KakinRoute.encode(id) }
}
