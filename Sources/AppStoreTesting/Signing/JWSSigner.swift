import AppStoreSecurity
public import Foundation

/// Signs payloads the way the App Store does: ES256, compact serialization, and a header of exactly
/// `{"alg":"ES256","x5c":[leaf, intermediate, root]}`.
public struct JWSSigner: Sendable {
    /// The key and chain that sign.
    public let identity: SigningIdentity
    /// The header, made once; `nil` only if a certificate could not be serialised, in which case
    /// every signing attempt reports that error.
    private let headerJSON: Data?

    /// Creates a signer for `identity`.
    public init(identity: SigningIdentity) {
        self.identity = identity
        headerJSON = try? Self.header(for: identity)
    }

    /// Signs raw payload bytes (normally a JSON object).
    public func sign(payload: Data) throws -> String {
        let header = try headerJSON ?? Self.header(for: identity)
        return try CompactJWS.sign(headerJSON: header, payload: payload, key: identity.privateKey)
    }

    /// `{"alg":"ES256","x5c":[…]}`, built by hand to keep Apple's key order and unescaped base64.
    private static func header(for identity: SigningIdentity) throws -> Data {
        let chain = try identity.chain.map { "\"" + Data(try $0.derEncoded()).base64EncodedString() + "\"" }
        return Data("{\"alg\":\"ES256\",\"x5c\":[\(chain.joined(separator: ","))]}".utf8)
    }

    /// Encodes `value` as JSON and signs it.
    public func sign<Payload: Encodable>(_ value: Payload) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.withoutEscapingSlashes]
        return try sign(payload: try encoder.encode(value))
    }
}
