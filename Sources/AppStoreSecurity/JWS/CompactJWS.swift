public import Crypto
import AppStoreModels
public import Foundation

/// A JWS in compact serialization, split into its three parts but not yet trusted.
public struct CompactJWS: Sendable, Hashable {
    /// The first segment as sent (base64url of the header JSON).
    public let encodedHeader: Substring
    /// The second segment as sent (base64url of the payload JSON).
    public let encodedPayload: Substring
    /// The third segment as sent (base64url of the 64-byte R‖S signature).
    public let encodedSignature: Substring

    /// Splits `text` into three segments; surrounding whitespace is ignored.
    ///
    /// Works on the UTF-8 view: a JWS is ASCII, and character-by-character processing of a
    /// 3 KB header would cost more than the signature check itself.
    public init(_ text: String) throws(AppStoreSecurityError) {
        var text = text
        // One pass over contiguous bytes: offsets of the trimmed start and end and of the dots.
        let offsets = text.withUTF8 { bytes -> (start: Int, end: Int, dots: [Int]) in
            var start = 0
            var end = bytes.count
            while start < end, Self.isWhitespace(bytes[start]) { start += 1 }
            while end > start, Self.isWhitespace(bytes[end - 1]) { end -= 1 }
            guard let base = bytes.baseAddress, start < end else { return (start, end, []) }
            var dots: [Int] = []
            var from = start
            while dots.count < 3, from < end,
                let found = memchr(base + from, Int32(UInt8(ascii: ".")), end - from)
            {
                let offset = base.distance(to: found.assumingMemoryBound(to: UInt8.self))
                dots.append(offset)
                from = offset + 1
            }
            return (start, end, dots)
        }
        guard offsets.dots.count == 2 else {
            let count = offsets.start == offsets.end ? 0 : offsets.dots.count + 1
            throw AppStoreSecurityError(
                .malformedInput, "a compact JWS has three base64url segments separated by dots",
                expected: "3 segments",
                found: count > 3 ? "more than 3 segments" : "\(count) segment\(count == 1 ? "" : "s")")
        }
        let utf8 = text.utf8
        func index(_ offset: Int) -> String.Index { utf8.index(utf8.startIndex, offsetBy: offset) }
        let firstDot = index(offsets.dots[0])
        let secondDot = index(offsets.dots[1])
        encodedHeader = text[index(offsets.start)..<firstDot]
        encodedPayload = text[utf8.index(after: firstDot)..<secondDot]
        encodedSignature = text[utf8.index(after: secondDot)..<index(offsets.end)]
        guard !encodedHeader.isEmpty, !encodedPayload.isEmpty else {
            throw AppStoreSecurityError(.malformedInput, "the JWS header or payload segment is empty")
        }
    }

    private static func isWhitespace(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09
    }

    /// The bytes the signature covers: `header "." payload` as ASCII.
    public var signingInput: Data {
        var data = Data(capacity: encodedHeader.utf8.count + encodedPayload.utf8.count + 1)
        data.append(contentsOf: encodedHeader.utf8)
        data.append(UInt8(ascii: "."))
        data.append(contentsOf: encodedPayload.utf8)
        return data
    }

    /// The decoded header JSON bytes.
    public func headerData() throws(AppStoreSecurityError) -> Data {
        guard let data = Base64URL.decode(encodedHeader) else {
            throw AppStoreSecurityError(.malformedInput, "the JWS header is not base64url")
        }
        return data
    }

    /// The decoded header.
    public func header() throws(AppStoreSecurityError) -> JWSHeader {
        let data = try headerData()
        do { return try JSONDecoder().decode(JWSHeader.self, from: data) } catch {
            throw AppStoreSecurityError(.malformedInput, "the JWS header is not a JSON object of the JWS header fields")
        }
    }

    /// The decoded payload bytes (JSON for every App Store payload).
    public func payloadData() throws(AppStoreSecurityError) -> Data {
        guard let data = Base64URL.decode(encodedPayload) else {
            throw AppStoreSecurityError(.malformedInput, "the JWS payload is not base64url")
        }
        return data
    }

    /// The payload decoded as `Payload`, before any check: read claims from it to choose the
    /// verifier, then pass it to ``JWSVerifier/verify(_:decoded:at:)`` so nothing is decoded twice.
    public func decodePayload<Payload: Decodable>(as type: Payload.Type) throws(AppStoreSecurityError) -> Payload {
        let data = try payloadData()
        if let flat = Payload.self as? any FlatJSONDecodable.Type,
            let payload = data.withUnsafeBytes({ flat.init(flatJSON: $0) }) as? Payload
        {
            return payload
        }
        do { return try JSONDecoder().decode(Payload.self, from: data) } catch {
            throw AppStoreSecurityError(
                .malformedInput, "the payload is not a valid \(Payload.self): \(JWSVerifier.describe(error))")
        }
    }

    /// The decoded signature bytes.
    public func signatureData() throws(AppStoreSecurityError) -> Data {
        guard let data = Base64URL.decode(encodedSignature) else {
            throw AppStoreSecurityError(.badSignature, "the JWS signature is not base64url")
        }
        return data
    }

    /// Checks the ES256 signature (raw 64-byte R‖S, as JOSE requires) with `key`; swift-crypto
    /// decides.
    public func verifySignature(with key: P256.Signing.PublicKey) throws(AppStoreSecurityError) {
        try Self.verifyES256(try signatureData(), over: signingInput, with: key)
    }

    /// The one ES256 check of every JWS Kakin reads: `signature` must be the 64-byte R‖S form
    /// (RFC 7518 §3.4) and verify over `signingInput` with `key`. Exposed to the module so the
    /// Wycheproof tests run their vectors through exactly this code.
    static func verifyES256(
        _ signature: Data, over signingInput: Data, with key: P256.Signing.PublicKey
    ) throws(AppStoreSecurityError) {
        guard signature.count == 64, let parsed = try? P256.Signing.ECDSASignature(rawRepresentation: signature) else {
            throw AppStoreSecurityError(
                .badSignature, "an ES256 signature is 64 bytes (R‖S)", expected: "64 bytes",
                found: "\(signature.count) bytes")
        }
        guard key.isValidSignature(parsed, for: signingInput) else {
            throw AppStoreSecurityError(
                .badSignature, "the signature does not match the header, payload and signing key")
        }
    }

    /// Signs `payload` under `header` with `key` and returns the compact serialization.
    public static func sign(headerJSON: Data, payload: Data, key: P256.Signing.PrivateKey) throws -> String {
        let signingInput = Base64URL.encode(headerJSON) + "." + Base64URL.encode(payload)
        let signature = try key.signature(for: Data(signingInput.utf8))
        return signingInput + "." + Base64URL.encode(signature.rawRepresentation)
    }
}
