import AppStoreModels
import Crypto
import Foundation
import Testing
import X509

@testable import AppStoreSecurity
import AppStoreTesting

@Suite struct JWSSignVerifyTests {
    let authority = TestAuthority.shared
    var verifier: SignedDataVerifier {
        try! SignedDataVerifier(
            rootCertificates: [authority.root], bundleID: "com.example.kakin", appAppleID: 42, environment: .sandbox,
            now: { TestAuthority.now })
    }

    func signed(_ payload: ClaimsPayload = ClaimsPayload(signedDate: TestAuthority.now)) throws -> String {
        try JWSSigner(identity: authority.signingIdentity).sign(payload)
    }

    @Test func signThenVerify() async throws {
        let jws = try signed()
        let payload = try await verifier.verify(jws, as: ClaimsPayload.self, checking: .all)
        #expect(payload.productId == "com.example.kakin.removeAd")
        #expect(payload.signedDate == TestAuthority.now)
    }

    @Test func headerIsShapedLikeApples() throws {
        let jws = try CompactJWS(try signed())
        let json = String(decoding: try jws.headerData(), as: UTF8.self)
        #expect(json.hasPrefix(#"{"alg":"ES256","x5c":[""#))
        #expect(try jws.header().certificateChain?.count == 3)
        #expect(try jws.signatureData().count == 64)
    }

    @Test func verifiesRepeatedlyThroughTheCache() async throws {
        let jws = try signed()
        let verifier = self.verifier
        for _ in 0..<3 {
            _ = try await verifier.verify(jws, as: ClaimsPayload.self, checking: .all)
        }
        // A cached chain is not reused for a time outside its validity.
        await #expect(throws: AppStoreSecurityError(.certificateExpired)) {
            try await verifier.verify(
                jws, as: ClaimsPayload.self, checking: .all, at: authority.leaf.notValidAfter.addingTimeInterval(1))
        }
        await #expect(throws: AppStoreSecurityError(.certificateNotYetValid)) {
            try await verifier.verify(
                jws, as: ClaimsPayload.self, checking: .all, at: authority.leaf.notValidBefore.addingTimeInterval(-1))
        }
    }

    @Test func payloadWithoutSignedDateIsCheckedAtTheInjectedNow() async throws {
        let jws = try signed(ClaimsPayload(signedDate: nil))
        _ = try await verifier.verify(jws, as: ClaimsPayload.self, checking: .all)
        let late = try SignedDataVerifier(
            rootCertificates: [authority.root], bundleID: "com.example.kakin", appAppleID: nil, environment: .sandbox,
            now: { Date(timeIntervalSince1970: 4_000_000_000) })
        await #expect(throws: AppStoreSecurityError(.certificateExpired)) {
            try await late.verify(jws, as: ClaimsPayload.self, checking: .all)
        }
    }

    @Test func productionRequiresAnAppID() {
        #expect(throws: AppStoreSecurityError(.invalidConfiguration)) {
            try SignedDataVerifier(bundleID: "com.example", appAppleID: nil, environment: .production)
        }
    }

    @Test func appIDIsCheckedInProductionOnly() async throws {
        let production = try SignedDataVerifier(
            rootCertificates: [authority.root], bundleID: "com.example.kakin", appAppleID: 42, environment: .production)
        let right = try signed(ClaimsPayload(appAppleId: 42, environment: .production, signedDate: TestAuthority.now))
        _ = try await production.verify(right, as: ClaimsPayload.self, checking: .all)
        let wrong = try signed(ClaimsPayload(appAppleId: 43, environment: .production, signedDate: TestAuthority.now))
        await #expect(throws: AppStoreSecurityError(.wrongAppAppleID)) {
            try await production.verify(wrong, as: ClaimsPayload.self, checking: .all)
        }
        // In the sandbox the app ID is not compared (Apple's sandbox TEST notifications have none).
        let sandbox = try signed(ClaimsPayload(appAppleId: 43, signedDate: TestAuthority.now))
        _ = try await verifier.verify(sandbox, as: ClaimsPayload.self, checking: .all)
    }

    @Test func errorsSayWhatWasExpectedAndFound() async throws {
        let jws = try signed(ClaimsPayload(bundleId: "com.other.app", signedDate: TestAuthority.now))
        do {
            _ = try await verifier.verify(jws, as: ClaimsPayload.self, checking: .all)
            Issue.record("a payload for another bundle was accepted")
        } catch {
            #expect(error.code == .wrongBundleID)
            #expect(error.expected == "com.example.kakin")
            #expect(error.found == "com.other.app")
            #expect("\(error)".contains("wrongBundleID"))
            #expect(!error.isRetryable)
        }
    }
}
