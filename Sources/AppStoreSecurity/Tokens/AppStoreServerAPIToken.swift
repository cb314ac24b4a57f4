public import Crypto
public import Foundation

/// The claims of an App Store Server API bearer token.
///
/// Apple requires `iss` (the issuer ID from App Store Connect), `aud` `appstoreconnect-v1`, `bid`
/// (the bundle ID), `exp`, and accepts `iat`; all times are whole seconds since 1970.
public struct AppStoreServerAPIClaims: Codable, Hashable, Sendable {
    /// The issuer ID (a UUID from App Store Connect's Keys page).
    public var issuer: String
    /// When the token was made.
    public var issuedAt: Int64?
    /// When the token stops being accepted.
    public var expiresAt: Int64
    /// Always `appstoreconnect-v1`.
    public var audience: String
    /// The bundle ID of the app the token acts for.
    public var bundleID: String

    enum CodingKeys: String, CodingKey {
        case issuer = "iss"
        case issuedAt = "iat"
        case expiresAt = "exp"
        case audience = "aud"
        case bundleID = "bid"
    }

    /// Creates claims.
    public init(
        issuer: String, issuedAt: Int64?, expiresAt: Int64, audience: String = AppStoreServerAPIToken.audience,
        bundleID: String
    ) {
        self.issuer = issuer
        self.issuedAt = issuedAt
        self.expiresAt = expiresAt
        self.audience = audience
        self.bundleID = bundleID
    }
}

/// Makes App Store Server API bearer tokens: ES256 JWTs with `kid` signed by an in-app purchase key.
public enum AppStoreServerAPIToken {
    /// The audience Apple requires.
    public static let audience = "appstoreconnect-v1"
    /// The longest lifetime Apple accepts.
    public static let maximumLifetime: TimeInterval = 3600

    /// Makes a token.
    ///
    /// - Parameters:
    ///   - keyID: the key's ID in App Store Connect (`kid`).
    ///   - issuerID: the issuer ID (`iss`).
    ///   - bundleID: the app's bundle ID (`bid`).
    ///   - privateKey: the `.p8` key.
    ///   - issuedAt: the current time; injected so tests are deterministic.
    ///   - lifetime: until expiry; Apple's libraries use five minutes.
    public static func make(
        keyID: String, issuerID: String, bundleID: String, privateKey: P256.Signing.PrivateKey,
        issuedAt: Date = Date(), lifetime: TimeInterval = 300
    ) throws -> String {
        let iat = Int64(issuedAt.timeIntervalSince1970.rounded(.down))
        let claims = AppStoreServerAPIClaims(
            issuer: issuerID, issuedAt: iat, expiresAt: iat + Int64(lifetime), bundleID: bundleID)
        let header = JWSHeader(algorithm: "ES256", keyID: keyID, type: "JWT")
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return try CompactJWS.sign(
            headerJSON: try encoder.encode(header), payload: try encoder.encode(claims), key: privateKey)
    }

    /// Reads a `.p8` in-app purchase key (PKCS#8 PEM, as App Store Connect hands it out).
    public static func privateKey(p8 text: String) throws(AppStoreSecurityError) -> P256.Signing.PrivateKey {
        do { return try P256.Signing.PrivateKey(pemRepresentation: text) } catch {
            throw AppStoreSecurityError(.malformedInput, "the key is not a PEM PKCS#8 P-256 private key")
        }
    }
}
