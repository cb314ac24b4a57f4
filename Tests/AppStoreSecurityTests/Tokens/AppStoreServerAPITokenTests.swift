import Crypto
import Foundation
import KakinTestSupport
import Testing

@testable import AppStoreSecurity

@Suite struct AppStoreServerAPITokenTests {
    let key = P256.Signing.PrivateKey()
    let now = Date(timeIntervalSince1970: 1_790_000_000)

    func verifier(
        bundleIDs: Set<String> = ["com.example.kakin"], at time: Date? = nil
    ) -> AppStoreServerAPITokenVerifier {
        let instant = time ?? now
        return AppStoreServerAPITokenVerifier(
            keys: [.init(keyID: "KEY123", issuerID: "issuer-uuid", bundleIDs: bundleIDs, publicKey: key.publicKey)],
            now: { instant })
    }

    func token(
        keyID: String = "KEY123", issuer: String = "issuer-uuid", bundle: String = "com.example.kakin",
        issuedAt: Date? = nil, lifetime: TimeInterval = 300, key: P256.Signing.PrivateKey? = nil
    ) throws -> String {
        try AppStoreServerAPIToken.make(
            keyID: keyID, issuerID: issuer, bundleID: bundle, privateKey: key ?? self.key, issuedAt: issuedAt ?? now,
            lifetime: lifetime)
    }

    @Test func makeThenVerify() throws {
        let claims = try verifier().verify(authorizationHeader: "Bearer \(try token())")
        #expect(claims.issuer == "issuer-uuid")
        #expect(claims.bundleID == "com.example.kakin")
        #expect(claims.audience == "appstoreconnect-v1")
        #expect(claims.expiresAt - (claims.issuedAt ?? 0) == 300)
        let header = try CompactJWS(try token()).header()
        #expect(header.algorithm == "ES256")
        #expect(header.keyID == "KEY123")
        #expect(header.type == "JWT")
    }

    @Test func applesTestSigningKeyMakesTokens() throws {
        guard SharedFixtures.available else { return }
        let p8 = try SharedFixtures.text("certs/testSigningKey.p8")
        let appleKey = try AppStoreServerAPIToken.privateKey(p8: p8)
        let verifier = AppStoreServerAPITokenVerifier(
            keys: [.init(keyID: "keyId", issuerID: "issuerId", publicKey: appleKey.publicKey)], now: { now })
        let token = try AppStoreServerAPIToken.make(
            keyID: "keyId", issuerID: "issuerId", bundleID: "com.example", privateKey: appleKey, issuedAt: now)
        #expect(try verifier.verify(token).bundleID == "com.example")
    }

    @Test func rejections() async throws {
        await #expect(throws: AppStoreSecurityError(.invalidToken)) { try await verifier().verify(authorizationHeader: nil) }
        await #expect(throws: AppStoreSecurityError(.invalidToken)) {
            try await verifier().verify(authorizationHeader: "Basic abc")
        }
        await #expect(throws: AppStoreSecurityError(.unknownKey)) { try await verifier().verify(try await token(keyID: "OTHER")) }
        await #expect(throws: AppStoreSecurityError(.badSignature)) {
            try await verifier().verify(try await token(key: P256.Signing.PrivateKey()))
        }
        await #expect(throws: AppStoreSecurityError(.invalidToken)) {
            try await verifier().verify(try await token(issuer: "someone-else"))
        }
        await #expect(throws: AppStoreSecurityError(.wrongBundleID)) { try await verifier().verify(try await token(bundle: "com.other")) }
        await #expect(throws: AppStoreSecurityError(.tokenExpired)) {
            try await verifier(at: now.addingTimeInterval(301 + 60)).verify(try await token())
        }
        await #expect(throws: AppStoreSecurityError(.tokenExpired)) {
            try await verifier().verify(try await token(issuedAt: now.addingTimeInterval(600)))
        }
        await #expect(throws: AppStoreSecurityError(.invalidToken)) { try await verifier().verify(try await token(lifetime: 7200)) }
        await #expect(throws: AppStoreSecurityError(.malformedInput)) { try await verifier().verify("not a token") }
        // A key registered without bundle IDs may act for any app.
        #expect(try verifier(bundleIDs: []).verify(try token(bundle: "com.any")).bundleID == "com.any")
    }

    @Test func wrongAlgorithmAndAudience() async throws {
        let header = Base64URL.encode(Data(#"{"alg":"HS256","kid":"KEY123","typ":"JWT"}"#.utf8))
        let body = Base64URL.encode(
            Data(#"{"iss":"issuer-uuid","exp":1790000300,"aud":"appstoreconnect-v1","bid":"com.example.kakin"}"#.utf8))
        await #expect(throws: AppStoreSecurityError(.wrongAlgorithm)) { try await verifier().verify("\(header).\(body).AAAA") }
        let es = try CompactJWS.sign(
            headerJSON: Data(#"{"alg":"ES256","kid":"KEY123","typ":"JWT"}"#.utf8),
            payload: Data(
                #"{"iss":"issuer-uuid","iat":1790000000,"exp":1790000300,"aud":"someone","bid":"com.example.kakin"}"#
                    .utf8),
            key: key)
        await #expect(throws: AppStoreSecurityError(.invalidToken)) { try await verifier().verify(es) }
    }
}
