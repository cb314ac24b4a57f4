import AppStoreModels
import Foundation
import Testing
import X509

@testable import AppStoreSecurity

/// A notification really signed by Apple verifies under the embedded Apple Root CA - G3.
@Suite struct RealAppleJWSTests {
    static let jws: String = {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Vectors/apple-sandbox-test-notification.jws")
        return try! String(contentsOf: url, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
    }()

    let verifier = try! SignedDataVerifier(
        bundleID: "com.loki-project.loki-messenger", appAppleID: nil, environment: .sandbox)

    @Test func verifiesAtItsSigningDate() async throws {
        let notification = try await verifier.verifyNotification(Self.jws)
        #expect(notification.notificationType == .test)
        #expect(notification.notificationUUID == "592751ef-c1b8-47fc-929e-d62dee66df4c")
        #expect(notification.signedDate == Date(epochMilliseconds: 1_757_035_472_686))
    }

    @Test func isExpiredToday() async {
        await #expect(throws: AppStoreSecurityError(.certificateExpired)) {
            try await verifier.verifyNotification(Self.jws, at: Date(timeIntervalSince1970: 1_790_000_000))
        }
    }

    @Test func appleChainCarriesTheMarkers() throws {
        let header = try CompactJWS(Self.jws).header()
        let chain = try #require(header.certificateChain).map {
            try Certificate.load(derOrPEM: Data(base64Encoded: $0)!)
        }
        #expect(chain.count == 3)
        #expect(chain[0].extensions[oid: .AppleMarker.receiptSigner] != nil)
        #expect(chain[1].extensions[oid: .AppleMarker.wwdrIntermediate] != nil)
        #expect(chain[2] == AppleRootCertificates.jwsRoots.first)
    }

    @Test func isNotTrustedUnderAnotherRoot() async {
        let sandbox = try! SignedDataVerifier(
            rootCertificates: [TestAuthority.shared.root], bundleID: "com.loki-project.loki-messenger", appAppleID: nil,
            environment: .sandbox)
        await #expect(throws: AppStoreSecurityError(.untrustedChain)) { try await sandbox.verifyNotification(Self.jws) }
    }

    @Test func aChangedPayloadFails() async throws {
        var parts = Self.jws.split(separator: ".").map(String.init)
        var payload = try #require(Base64URL.decode(parts[1]))
        payload = Data(
            String(decoding: payload, as: UTF8.self).replacingOccurrences(of: "TEST", with: "DID_RENEW").utf8)
        parts[1] = Base64URL.encode(payload)
        await #expect(throws: AppStoreSecurityError(.badSignature)) {
            try await verifier.verifyNotification(parts.joined(separator: "."))
        }
    }
}
