/// The protected header of a JWS.
///
/// The App Store sends exactly `{"alg":"ES256","x5c":[leaf, intermediate, root]}`; Xcode adds
/// `kid` (`Apple_Xcode_Key`) and `typ` (`JWT`) and sends a single self-signed certificate; App
/// Store Server API bearer tokens carry `kid` and `typ` but no `x5c`.
public struct JWSHeader: Codable, Hashable, Sendable {
    /// The signature algorithm. Kakin accepts only `ES256`.
    public var algorithm: String?
    /// The certificate chain, each entry the standard base64 of a DER certificate, leaf first.
    public var certificateChain: [String]?
    /// The key identifier.
    public var keyID: String?
    /// The token type.
    public var type: String?

    enum CodingKeys: String, CodingKey {
        case algorithm = "alg"
        case certificateChain = "x5c"
        case keyID = "kid"
        case type = "typ"
    }

    /// Creates a header.
    public init(
        algorithm: String? = "ES256", certificateChain: [String]? = nil, keyID: String? = nil, type: String? = nil
    ) {
        self.algorithm = algorithm
        self.certificateChain = certificateChain
        self.keyID = keyID
        self.type = type
    }
}
