import AppStoreModels
import Foundation
import KakinTestSupport
import Testing
import X509

@testable import AppStoreSecurity

/// Apple's own signed test vectors verify, or fail, exactly as `../shared/fixtures/README.md` says.
@Suite(.enabled(if: SharedFixtures.available, SharedFixtures.skipMessage))
struct AppleSignedFixtureTests {
    func appleTestRoot() throws -> Certificate {
        try Certificate.load(derOrPEM: try SharedFixtures.data("certs/testCA.der"))
    }

    func verifier(
        _ environment: AppStoreEnvironment, appAppleID: Int64? = 1234, bundleID: String = "com.example"
    )
        throws -> SignedDataVerifier
    {
        try SignedDataVerifier(
            rootCertificates: [try appleTestRoot()], bundleID: bundleID, appAppleID: appAppleID,
            environment: environment)
    }

    @Test func testNotificationIsValidAsSandbox() async throws {
        let payload = try await verifier(.sandbox).verify(
            try SharedFixtures.text("mock_signed_data/testNotification"), as: ClaimsPayload.self, checking: .all)
        #expect(payload.signedPayloadBundleID == "com.example")
        #expect(payload.signedPayloadAppAppleID == 1234)
        #expect(payload.signedDate == Date(epochMilliseconds: 1_681_314_324_000))
    }

    @Test func testNotificationAsProductionIsTheWrongEnvironment() async throws {
        await #expect(throws: AppStoreSecurityError(.wrongEnvironment)) {
            try await verifier(.production).verify(
                try await SharedFixtures.text("mock_signed_data/testNotification"), as: ClaimsPayload.self, checking: .all)
        }
    }

    @Test func testNotificationAsProductionWithAnotherAppIDIsTheWrongApp() async throws {
        await #expect(throws: AppStoreSecurityError(.wrongAppAppleID)) {
            try await verifier(.production, appAppleID: 1235).verify(
                try await SharedFixtures.text("mock_signed_data/testNotification"), as: ClaimsPayload.self, checking: .all)
        }
    }

    @Test func transactionInfoIsValidAsSandboxOnly() async throws {
        let jws = try SharedFixtures.text("mock_signed_data/transactionInfo")
        let payload = try await verifier(.sandbox).verify(jws, as: ClaimsPayload.self, checking: [.bundleID, .environment])
        #expect(payload.signedDate == Date(epochMilliseconds: 1_672_956_154_000))
        await #expect(throws: AppStoreSecurityError(.wrongEnvironment)) {
            try await verifier(.production).verify(jws, as: ClaimsPayload.self, checking: [.bundleID, .environment])
        }
    }

    @Test func renewalInfoIsValidAsSandbox() async throws {
        _ = try await verifier(.sandbox).verify(
            try SharedFixtures.text("mock_signed_data/renewalInfo"), as: ClaimsPayload.self, checking: [.environment])
    }

    @Test func wrongBundleIDIsTheWrongApp() async throws {
        await #expect(throws: AppStoreSecurityError(.wrongBundleID)) {
            try await verifier(.sandbox).verify(
                try await SharedFixtures.text("mock_signed_data/wrongBundleId"), as: ClaimsPayload.self, checking: .all)
        }
    }

    @Test func missingX5CIsMalformed() async throws {
        await #expect(throws: AppStoreSecurityError(.malformedInput)) {
            try await verifier(.sandbox).verify(
                try await SharedFixtures.text("mock_signed_data/missingX5CHeaderClaim"), as: ClaimsPayload.self, checking: .all)
        }
    }

    @Test func appleTestDataIsNotTrustedUnderTheRealRoot() async throws {
        let real = try SignedDataVerifier(bundleID: "com.example", appAppleID: 1234, environment: .sandbox)
        await #expect(throws: AppStoreSecurityError(.untrustedChain)) {
            try await real.verify(
                try await SharedFixtures.text("mock_signed_data/transactionInfo"), as: ClaimsPayload.self, checking: .all)
        }
    }

    @Test(arguments: [
        "xcode/xcode-signed-transaction", "xcode/xcode-signed-renewal-info", "xcode/xcode-signed-app-transaction",
    ])
    func xcodeSignedDataNeedsTheXcodeOptIn(_ path: String) async throws {
        let jws = try SharedFixtures.text(path)
        let xcode = try SignedDataVerifier(
            rootCertificates: [], bundleID: "com.example.naturelab.backyardbirds.example", appAppleID: nil,
            environment: .xcode)
        let verified = try await xcode.jwsVerifier.verify(jws, as: XcodePayload.self)
        #expect(verified.isXcodeSigned)
        #expect(verified.payload.signedPayloadEnvironment == .xcode)
        for environment in [AppStoreEnvironment.sandbox, .production] {
            await #expect(throws: AppStoreSecurityError(.invalidChainLength)) {
                try await verifier(environment, bundleID: "com.example.naturelab.backyardbirds.example")
                    .verify(jws, as: XcodePayload.self, checking: .all)
            }
        }
    }

    @Test func xcodeSignedTransactionClaims() async throws {
        let xcode = try SignedDataVerifier(
            rootCertificates: [], bundleID: "com.example.naturelab.backyardbirds.example", appAppleID: nil,
            environment: .xcode)
        let payload = try await xcode.verify(
            try SharedFixtures.text("xcode/xcode-signed-transaction"), as: XcodePayload.self, checking: .all)
        #expect(payload.productId == "pass.premium")
        #expect(payload.transactionId == "0")
        #expect(abs(try #require(payload.signedDate).timeIntervalSince1970 - 1_697_679_936.056485) < 0.000_001)
    }

    @Test func aForgedXcodeSignatureIsRejectedEvenWhenXcodeIsTrusted() async throws {
        let jws = try SharedFixtures.text("xcode/xcode-signed-transaction")
        var parts = jws.split(separator: ".").map(String.init)
        var signature = Base64URL.decode(parts[2])!
        signature[0] ^= 0x01
        parts[2] = Base64URL.encode(signature)
        let xcode = try SignedDataVerifier(
            rootCertificates: [], bundleID: "com.example.naturelab.backyardbirds.example", appAppleID: nil,
            environment: .xcode)
        await #expect(throws: AppStoreSecurityError(.badSignature)) {
            try await xcode.verify(parts.joined(separator: "."), as: XcodePayload.self, checking: .all)
        }
    }
}

/// The claims of Xcode's payloads (transaction, renewal info, app transaction).
struct XcodePayload: Codable, SignedPayload {
    var bundleId: String?
    var environment: AppStoreEnvironment?
    var receiptType: AppStoreEnvironment?
    var productId: String?
    var transactionId: String?
    @EpochMilliseconds var signedDate: Date?
    @EpochMilliseconds var receiptCreationDate: Date?

    var signedPayloadDate: Date? { signedDate ?? receiptCreationDate }
    var signedPayloadBundleID: String? { bundleId }
    var signedPayloadAppAppleID: Int64? { nil }
    var signedPayloadEnvironment: AppStoreEnvironment? { environment ?? receiptType }
}
