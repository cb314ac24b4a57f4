public import Foundation

/// Signs payloads the way the App Store does: ES256, compact serialization, and a header of exactly
/// `{"alg":"ES256","x5c":[leaf, intermediate, root]}`.
public struct JWSSigner: Sendable {
    /// The key and chain that sign.
    public let identity: SigningIdentity
    private let headerJSON: Data

    /// Creates a signer for `identity`.
    public init(identity: SigningIdentity) {
        self.identity = identity
        // Built by hand to keep Apple's key order and unescaped base64.
        let chain = identity.chain.map { "\"" + Data($0.derBytes).base64EncodedString() + "\"" }
        headerJSON = Data("{\"alg\":\"ES256\",\"x5c\":[\(chain.joined(separator: ","))]}".utf8)
    }

    /// Signs raw payload bytes (normally a JSON object).
    public func sign(payload: Data) throws -> String {
        try CompactJWS.sign(headerJSON: headerJSON, payload: payload, key: identity.privateKey)
    }

    /// Encodes `value` as JSON and signs it.
    public func sign<Payload: Encodable>(_ value: Payload) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.withoutEscapingSlashes]
        return try sign(payload: try encoder.encode(value))
    }
}
