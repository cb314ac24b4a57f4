public import Crypto
public import Foundation

/// Checks App Store Server API bearer tokens, as the App Store does (and as Kakin's sandbox does).
public struct AppStoreServerAPITokenVerifier: Sendable {
    /// A key registered for API access.
    public struct Key: Sendable {
        /// The key ID (`kid`).
        public let keyID: String
        /// The issuer ID tokens signed with this key must carry (`iss`).
        public let issuerID: String
        /// The bundle IDs tokens signed with this key may act for; empty means any.
        public let bundleIDs: Set<String>
        /// The public half of the `.p8` key.
        public let publicKey: P256.Signing.PublicKey

        /// Registers a key.
        public init(keyID: String, issuerID: String, bundleIDs: Set<String> = [], publicKey: P256.Signing.PublicKey) {
            self.keyID = keyID
            self.issuerID = issuerID
            self.bundleIDs = bundleIDs
            self.publicKey = publicKey
        }
    }

    private let keys: [String: Key]
    /// Tolerated clock difference between the token's maker and this verifier.
    public let leeway: TimeInterval
    private let now: @Sendable () -> Date

    /// Creates a verifier for `keys`.
    public init(keys: [Key], leeway: TimeInterval = 60, now: @escaping @Sendable () -> Date = { Date() }) {
        self.keys = Dictionary(keys.map { ($0.keyID, $0) }, uniquingKeysWith: { _, last in last })
        self.leeway = leeway
        self.now = now
    }

    /// Verifies the value of an `Authorization` header (`Bearer <token>`).
    public func verify(authorizationHeader value: String?) throws(AppStoreSecurityError) -> AppStoreServerAPIClaims {
        guard let value, value.hasPrefix("Bearer ") else {
            throw AppStoreSecurityError(
                .invalidToken, "the request has no bearer token", expected: "Authorization: Bearer <JWT>",
                found: value == nil ? "no Authorization header" : "another scheme")
        }
        return try verify(String(value.dropFirst("Bearer ".count)))
    }

    /// Verifies a token: ES256, a registered `kid`, its signature, audience, issuer, bundle and lifetime.
    public func verify(_ token: String) throws(AppStoreSecurityError) -> AppStoreServerAPIClaims {
        let jws = try CompactJWS(token)
        let header = try jws.header()
        guard header.algorithm == "ES256" else {
            throw AppStoreSecurityError(
                .wrongAlgorithm, "API tokens are signed with ES256", expected: "ES256",
                found: header.algorithm ?? "no alg")
        }
        guard let keyID = header.keyID else {
            throw AppStoreSecurityError(
                .invalidToken, "the token header has no kid", expected: "a key ID", found: "no kid")
        }
        guard let key = keys[keyID] else {
            throw AppStoreSecurityError(.unknownKey, "no API key is registered under this ID", found: keyID)
        }
        try jws.verifySignature(with: key.publicKey)
        let claims: AppStoreServerAPIClaims
        do { claims = try JSONDecoder().decode(AppStoreServerAPIClaims.self, from: try jws.payloadData()) } catch {
            throw AppStoreSecurityError(.invalidToken, "the token needs iss, exp, aud and bid claims")
        }
        guard claims.audience == AppStoreServerAPIToken.audience else {
            throw AppStoreSecurityError(
                .invalidToken, "wrong audience", expected: AppStoreServerAPIToken.audience, found: claims.audience)
        }
        guard claims.issuer == key.issuerID else {
            throw AppStoreSecurityError(
                .invalidToken, "wrong issuer for this key", expected: key.issuerID, found: claims.issuer)
        }
        if !key.bundleIDs.isEmpty, !key.bundleIDs.contains(claims.bundleID) {
            throw AppStoreSecurityError(
                .wrongBundleID, "this key may not act for the bundle",
                expected: key.bundleIDs.sorted().joined(separator: ", "),
                found: claims.bundleID)
        }
        let current = now().timeIntervalSince1970
        if Double(claims.expiresAt) + leeway < current {
            throw AppStoreSecurityError(
                .tokenExpired, "the token has expired", expected: "exp after \(Int64(current))",
                found: "\(claims.expiresAt)")
        }
        let issued = claims.issuedAt.map(Double.init) ?? current
        if issued - leeway > current {
            throw AppStoreSecurityError(
                .tokenExpired, "the token was issued in the future", expected: "iat at or before \(Int64(current))",
                found: "\(claims.issuedAt ?? 0)")
        }
        if Double(claims.expiresAt) - issued > AppStoreServerAPIToken.maximumLifetime {
            throw AppStoreSecurityError(
                .invalidToken, "the token lives longer than Apple allows", expected: "exp at most 3600 s after iat",
                found: "\(Int64(Double(claims.expiresAt) - issued)) s")
        }
        return claims
    }
}
