public import Crypto
public import Foundation
import KakinCore
import KakinWire

/// A customer token: what an app's own backend, which knows who its user is, gives the app so that
/// the purchase server believes the app speaks for that user.
///
/// It is a JSON Web Token signed with HMAC-SHA256 (`HS256`) under the app's customer-token secret
/// (`apps[].customerTokens.secret`), with the claims `sub` (the app user ID), `aud` (the app's
/// bundle ID), `iat` and `exp` (seconds since 1970). The SDK sends it as `X-Kakin-Customer-Token`.
/// Any JWT library makes one; ``mint(appUserID:bundleID:secret:lifetime:now:)`` and
/// `kakin token customer` do too.
///
/// The signature is decided by swift-crypto's HMAC; this type only reads and writes the token's
/// three base64url parts.
public enum CustomerToken {
    /// Why a token was not accepted: each is answered 401 with the case's name as the error's cause.
    public enum Failure: String, Error, Sendable, CaseIterable {
        /// No token came with a request that needs one.
        case customerTokenMissing
        /// Not a token, not `HS256`, a signature that does not verify, or claims that cannot be read.
        case customerTokenInvalid
        /// The token expired (or was issued in the future, or lives longer than a day).
        case customerTokenExpired
        /// A valid token for another customer or another app.
        case customerTokenWrongCustomer
    }

    /// The longest life a token may claim (`exp - iat`): a day. Tokens are meant to live minutes.
    public static let maxLifetime: TimeInterval = 86_400
    /// Clock skew forgiven between the app's backend and this server.
    public static let leeway: TimeInterval = 60

    /// The claims of a token.
    public struct Claims: Codable, Hashable, Sendable {
        /// The app user ID the token speaks for.
        public var sub: String
        /// The bundle ID of the app.
        public var aud: String
        /// When it was issued, seconds since 1970.
        public var iat: Int64
        /// When it expires, seconds since 1970.
        public var exp: Int64
    }

    private struct Header: Codable {
        var alg: String
        var typ: String?
    }

    /// A token for `appUserID` of `bundleID`, valid for `lifetime` seconds from `now`.
    public static func mint(
        appUserID: String, bundleID: String, secret: SymmetricKey, lifetime: TimeInterval = 3600, now: Date = Date()
    ) -> String {
        let issued = Int64(now.timeIntervalSince1970.rounded(.down))
        // Written by the same non-throwing JSON writer as the server's answers, keys sorted.
        var claims = JSONOutput(capacity: 128)
        claims.object { output in
            output.field("aud", bundleID)
            output.field("exp", issued + Int64(lifetime.rounded(.down)))
            output.field("iat", issued)
            output.field("sub", appUserID)
        }
        let signingInput = base64URL(Data(#"{"alg":"HS256","typ":"JWT"}"#.utf8)) + "." + base64URL(Data(claims.bytes))
        let signature = HMAC<SHA256>.authenticationCode(for: Data(signingInput.utf8), using: secret)
        return signingInput + "." + base64URL(Data(signature))
    }

    /// The claims of `token` when it is a valid token of `bundleID` for `appUserID` at `now`.
    ///
    /// - Throws: ``Failure``: the first check that fails, in the order signature, app, time, customer.
    @discardableResult
    public static func verify(
        _ token: String, appUserID: String, bundleID: String, secret: SymmetricKey, now: Date
    ) throws(Failure) -> Claims {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard token.utf8.count <= 4096, parts.count == 3, let headerBytes = data(base64URL: parts[0]),
            let header = try? JSONDecoder().decode(Header.self, from: headerBytes), header.alg == "HS256",
            let signature = data(base64URL: parts[2]), let payloadBytes = data(base64URL: parts[1])
        else { throw .customerTokenInvalid }
        let signingInput = Data(token.utf8.prefix(parts[0].utf8.count + 1 + parts[1].utf8.count))
        guard HMAC<SHA256>.isValidAuthenticationCode(signature, authenticating: signingInput, using: secret) else {
            throw .customerTokenInvalid
        }
        guard let claims = try? JSONDecoder().decode(Claims.self, from: payloadBytes) else {
            throw .customerTokenInvalid
        }
        guard claims.aud == bundleID else { throw .customerTokenWrongCustomer }
        let seconds = now.timeIntervalSince1970
        guard Double(claims.exp) + leeway > seconds, Double(claims.iat) - leeway <= seconds,
            Double(claims.exp - claims.iat) <= maxLifetime
        else { throw .customerTokenExpired }
        guard claims.sub == appUserID else { throw .customerTokenWrongCustomer }
        return claims
    }

    /// Unpadded base64url.
    static func base64URL(_ data: Data) -> String {
        data.base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    /// The bytes of unpadded base64url text; `nil` for anything else.
    static func data(base64URL text: Substring) -> Data? {
        guard text.utf8.allSatisfy({ byte in
            (65...90).contains(byte) || (97...122).contains(byte) || (48...57).contains(byte) || byte == 45 || byte == 95
        }) else { return nil }
        var standard = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        let remainder = standard.utf8.count % 4
        guard remainder != 1 else { return nil }
        if remainder > 0 { standard += String(repeating: "=", count: 4 - remainder) }
        return Data(base64Encoded: standard)
    }
}

/// An app's customer tokens (`apps[].customerTokens`): the secret its backend signs them with, and
/// whether publishable-key requests about identified customers must carry one.
public struct CustomerTokenPolicy: Sendable {
    /// The HMAC key of the app's tokens (at least 32 bytes of secret).
    public var secret: SymmetricKey
    /// Whether every publishable-key request that names an identified customer needs a valid token
    /// for that customer (401 otherwise). When false, a token that comes is still checked.
    public var required: Bool

    /// Creates a policy from the secret's text.
    public init(secret: String, required: Bool) {
        self.secret = SymmetricKey(data: Data(secret.utf8))
        self.required = required
    }
}
