import Foundation

/// A Stripe request that failed: Stripe's refusal as its error body describes it, no answer at
/// all, or an answer that could not be read.
///
/// Stripe answers a refusal with an HTTP status and a body
/// `{"error": {"type", "code", "message", "param", "decline_code"}}`; each part is kept as sent.
/// ``kind`` sorts the failure for the caller, and ``isRetryable`` says whether sending the same
/// request again (with the same idempotency key) may succeed.
struct StripeError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What kind of failure this is.
    enum Kind: String, Sendable, Hashable {
        /// The secret key is missing, wrong or revoked (HTTP 401).
        case authentication
        /// The key may not make this request (HTTP 403).
        case permission
        /// A payment was refused: Stripe's `card_error`, or any 402 ("the parameters were valid
        /// but the request failed"); ``StripeError/code`` and ``StripeError/declineCode`` say why.
        case card
        /// No such object (HTTP 404, Stripe's `resource_missing`).
        case notFound
        /// The request reused an idempotency key with other parameters, or raced a request with
        /// the same key (Stripe's `idempotency_error`, HTTP 409).
        case idempotency
        /// Too many requests (HTTP 429).
        case rateLimit
        /// Stripe failed (HTTP 5xx or Stripe's `api_error`).
        case api
        /// Anything else Stripe refused: a missing or bad parameter, an object in the wrong state.
        case invalidRequest
        /// Nothing answered: no connection, a timeout.
        case noAnswer
        /// Stripe answered a body that is not what the request expects (nor an error body).
        case unreadableAnswer
    }

    /// What kind of failure this is.
    var kind: Kind
    /// The HTTP status, or `nil` when nothing answered.
    var status: Int?
    /// Stripe's error type as sent (`card_error`, `invalid_request_error`, `api_error`…).
    var type: String?
    /// Stripe's error code (`card_declined`, `resource_missing`…), when it gives one.
    var code: String?
    /// The card issuer's reason for a decline (`insufficient_funds`…), when Stripe gives one.
    var declineCode: String?
    /// The parameter Stripe found wrong, when it names one.
    var param: String?
    /// A human-readable account of the failure.
    var message: String
    /// Stripe's `Request-Id` for the request, to quote to Stripe's support.
    var requestID: String?
    /// Whether the same request, sent again with the same idempotency key, may succeed.
    var isRetryable: Bool

    var description: String {
        var text = "Stripe \(kind.rawValue) error"
        if let status { text += " (HTTP \(status))" }
        if let code { text += " \(code)" }
        return text + ": \(message)"
    }

    /// No answer came for a request: retryable, since an idempotency key makes a second sending safe.
    static func noAnswer(_ cause: any Error) -> StripeError {
        StripeError(kind: .noAnswer, message: "Stripe did not answer: \(cause)", isRetryable: true)
    }

    /// A 2xx answer whose body is not the `expected` object.
    static func unreadable(_ expected: String, status: Int, cause: any Error, requestID: String?) -> StripeError {
        StripeError(
            kind: .unreadableAnswer, status: status,
            message: "Stripe answered \(status) with a body that is not a \(expected): \(cause)", requestID: requestID,
            isRetryable: false)
    }

    /// Stripe's refusal, read from a non-2xx `answer`.
    ///
    /// The kind follows the HTTP status where Stripe's documentation gives it a meaning (401, 403,
    /// 402, 404, 409, 429, 5xx), and Stripe's error type otherwise: Stripe itself sends
    /// `invalid_request_error` with a 401 for a bad key. It is retryable for a 429 or a 5xx,
    /// unless a `Stripe-Should-Retry` header says otherwise; when that header is present, it
    /// decides for any status.
    static func refusal(_ answer: HTTPAnswer) -> StripeError {
        let details = (try? JSONDecoder().decode(Envelope.self, from: answer.body))?.error
        let retryHeader = answer.headers["stripe-should-retry"]?.lowercased()
        let retryable =
            retryHeader == "true" ? true : retryHeader == "false" ? false : answer.status == 429 || answer.status >= 500
        return StripeError(
            kind: kind(status: answer.status, type: details?.type), status: answer.status, type: details?.type,
            code: details?.code, declineCode: details?.declineCode, param: details?.param,
            message: details?.message ?? "Stripe answered \(answer.status) without an error message",
            requestID: answer.headers["request-id"], isRetryable: retryable)
    }

    /// The kind of a refusal with `status` and Stripe's error `type`.
    private static func kind(status: Int, type: String?) -> Kind {
        switch (status, type) {
        case (401, _): .authentication
        case (403, _): .permission
        case (_, "card_error"), (402, _): .card
        case (404, _): .notFound
        case (_, "idempotency_error"), (409, _): .idempotency
        case (429, _): .rateLimit
        case (_, "api_error"), (500..., _): .api
        default: .invalidRequest
        }
    }

    /// Stripe's error body.
    private struct Envelope: Decodable {
        var error: Details
    }

    /// The parts of Stripe's error body that are kept; any may be missing.
    private struct Details: Decodable {
        var type: String?
        var code: String?
        var message: String?
        var param: String?
        var declineCode: String?

        enum CodingKeys: String, CodingKey {
            case type, code, message, param
            case declineCode = "decline_code"
        }
    }
}
