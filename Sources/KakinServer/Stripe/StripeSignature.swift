import Crypto
import Foundation

/// Checks the `Stripe-Signature` header Stripe sends with each webhook: an HMAC-SHA256, keyed with
/// the endpoint's signing secret (`whsec_…`), of the request's timestamp, a dot and its raw body.
///
/// The header reads `t=<Unix seconds>,v1=<hex>[,v1=<hex>…][,v0=<hex>]`: while a secret is being
/// rolled, Stripe signs with both and sends a `v1` for each. A request is accepted when any `v1`
/// matches any of ``secrets`` (so that an operator can list the old and the new secret while rolling
/// too), compared in constant time by swift-crypto, and its timestamp is at most ``tolerance`` old
/// by the real clock: a captured request sent again later is refused. Other schemes (`v0`, Stripe's
/// test-mode scheme) are ignored. The body must be the bytes as received, before any JSON parsing.
struct StripeSignature: Sendable {
    /// Why a webhook's signature was refused.
    enum Failure: Error, Equatable, Sendable {
        /// No `Stripe-Signature` header.
        case missingHeader
        /// The header has no timestamp, a timestamp that is not a number, or no `v1` signature.
        case malformedHeader
        /// The timestamp is older than the tolerance allows.
        case timestampOutsideTolerance
        /// No `v1` signature is the HMAC of this body and timestamp under a configured secret.
        case signatureMismatch
    }

    /// How old a signed timestamp may be; Stripe's own libraries allow five minutes.
    static let defaultTolerance: TimeInterval = 300

    /// The endpoint's signing secrets, as Stripe shows them (`whsec_…`); the whole string is the key.
    let secrets: [String]
    /// How old a signed timestamp may be, in seconds.
    var tolerance: TimeInterval = defaultTolerance

    /// Checks `header` (the `Stripe-Signature` value, `nil` when absent) against `body` at `now`
    /// (real time, not a sandbox's clock); returns the signed timestamp.
    @discardableResult
    func verify(header: String?, body: Data, now: Date) throws(Failure) -> Date {
        guard let header else { throw .missingHeader }
        var timestamp: Int64?
        var signatures: [Data] = []
        for part in header.split(separator: ",") {
            let pair = part.split(separator: "=", maxSplits: 1)
            guard pair.count == 2 else { continue }
            let (scheme, value) = (pair[0].trimmingCharacters(in: .whitespaces), String(pair[1]))
            switch scheme {
            case "t":
                guard timestamp == nil, let seconds = Int64(value) else { throw .malformedHeader }
                timestamp = seconds
            case "v1":
                // A value that is not 32 bytes of hex cannot match; it is skipped, not an error.
                if let bytes = Self.hexBytes(value), bytes.count == SHA256.byteCount { signatures.append(bytes) }
            default:
                continue
            }
        }
        guard let timestamp, !signatures.isEmpty || header.contains("v1=") else { throw .malformedHeader }
        let signedAt = Date(timeIntervalSince1970: TimeInterval(timestamp))
        guard now.timeIntervalSince(signedAt) <= tolerance else { throw .timestampOutsideTolerance }
        var payload = Data("\(timestamp).".utf8)
        payload.append(body)
        for secret in secrets {
            let key = SymmetricKey(data: Data(secret.utf8))
            for signature in signatures
            where HMAC<SHA256>.isValidAuthenticationCode(signature, authenticating: payload, using: key) {
                return signedAt
            }
        }
        throw .signatureMismatch
    }

    /// The header Stripe would send for `body` signed with `secret` at `timestamp`, for tests: the
    /// scheme is the one Kakin signs its own webhooks with (``WebhookDispatcher/signature(body:timestamp:secret:)``).
    static func header(for body: Data, secret: String, timestamp: Date) -> String {
        let seconds = Int64(timestamp.timeIntervalSince1970.rounded(.down))
        return "t=\(seconds),v1=\(WebhookDispatcher.signature(body: body, timestamp: seconds, secret: secret))"
    }

    /// The bytes of a lowercase or uppercase hexadecimal string; `nil` when it is not one.
    private static func hexBytes(_ text: String) -> Data? {
        let digits = Array(text.utf8)
        guard digits.count.isMultiple(of: 2) else { return nil }
        var bytes = Data(capacity: digits.count / 2)
        var index = 0
        while index < digits.count {
            guard let high = nibble(digits[index]), let low = nibble(digits[index + 1]) else { return nil }
            bytes.append(high << 4 | low)
            index += 2
        }
        return bytes
    }

    private static func nibble(_ digit: UInt8) -> UInt8? {
        switch digit {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): digit - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): digit - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): digit - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
