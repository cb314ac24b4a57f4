import AppStoreModels
import AppStoreSecurity
import AppStoreTesting
import Foundation
import KakinCLI
import KakinTestSupport
import Testing

@Suite struct ReceiptCommandTests {
    @Test func inspectsAReceiptSignedBySandboxCA() async throws {
        let scratch = try ScratchDirectory()
        let authority = try SandboxCertificateAuthority.generate()
        try authority.write(to: scratch.url.appendingPathComponent("ca"))
        let device = UUID()
        let receipt = AppReceipt(
            receiptType: .productionSandbox, bundleID: "com.example.kakin", applicationVersion: "3",
            opaqueValue: Data([1, 2, 3, 4, 5, 6, 7, 8]), creationDate: Date(),
            inAppPurchases: [
                InAppPurchaseReceipt(
                    productID: "com.example.kakin.removeAd", transactionID: "1000", purchaseDate: Date())
            ])
        let signer = AppReceiptSigner(identity: authority.signingIdentity)
        let base64 = try scratch.write(
            try signer.signBase64(receipt, deviceIdentifier: AppReceipt.deviceIdentifier(from: device)),
            to: "receipt.b64")
        let der = scratch.path("receipt.der")
        try Data(try signer.sign(receipt, deviceIdentifier: AppReceipt.deviceIdentifier(from: device)))
            .write(to: URL(fileURLWithPath: der))

        for file in [base64, der] {
            let output = try await kakin(
                "receipt", "inspect", "--root", scratch.path("ca/root.pem"), "--device-id", device.uuidString, file)
            #expect(output.exitCode == 0, "\(output.standardError)")
            let json = try JSONSerialization.jsonObject(with: Data(output.standardOutput.utf8)) as! [String: Any]
            let verification = json["verification"] as! [String: Any]
            #expect(verification["valid"] as? Bool == true)
            #expect(verification["chainVerified"] as? Bool == true)
            #expect(verification["deviceHashVerified"] as? Bool == true)
            #expect(output.standardOutput.contains("com.example.kakin.removeAd"))
        }

        let untrusted = try await kakin("receipt", "inspect", base64)
        #expect(untrusted.exitCode == 0)
        #expect(untrusted.standardOutput.contains(#""code" : "untrustedChain""#))
        #expect(untrusted.standardOutput.contains(#""valid" : false"#))
    }

    @Test func malformedReceiptsGetOneLine() async throws {
        let scratch = try ScratchDirectory()
        for (name, text) in [("empty", ""), ("text", "hello, receipt"), ("base64", "AAAA"), ("json", "{}")] {
            let output = try await kakin("receipt", "inspect", try scratch.write(text, to: name))
            #expect(output.exitCode == 1, "\(name)")
            #expect(output.standardError.hasPrefix("error: malformedInput"), "\(output.standardError)")
        }
    }

    @Test(.enabled(if: SharedFixtures.available, SharedFixtures.skipMessage))
    func inspectsXcodeReceipts() async throws {
        let file = SharedFixtures.path("xcode/xcode-app-receipt-with-transaction")
        let trusted = try await kakin("receipt", "inspect", "--trust-xcode", file)
        #expect(trusted.standardOutput.contains(#""trust" : "Xcode self-signed certificate""#))
        #expect(trusted.standardOutput.contains(#""productID" : "pass.premium""#))
        let untrusted = try await kakin("receipt", "inspect", file)
        #expect(untrusted.standardOutput.contains(#""code" : "invalidChainLength""#))
    }
}
